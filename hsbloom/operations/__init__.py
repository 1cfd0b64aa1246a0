"""What changes an index, each a step of its operation log (docs/design/log.md): create, delete, restore, vacuum,
cancel, forced delete, verify. `protocol` holds the one template every operation follows; refresh, the
largest, has its own package (hsbloom.refresh)."""
