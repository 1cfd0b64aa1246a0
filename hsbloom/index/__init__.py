"""An index as it is stored: where it lives (layout, system path), its operation log, the source it
describes, and reading what exists (catalog). Nothing here changes an index: hsbloom.operations does."""
