package hsbloom.testkms;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.crypto.KeyAccessDeniedException;
import org.apache.parquet.crypto.keytools.KmsClient;

/**
 * A key management service for tests, so that they can write and read Parquet files encrypted by parquet-java's
 * PropertiesDrivenCryptoFactory without a real KMS. Its master keys are the Hadoop setting
 * {@code parquet.encryption.key.list} ("keyId:base64key,..."), and a data key is wrapped in this process with
 * AES-GCM under its master key (a fresh nonce per wrap, the key id as associated data). Keys in a configuration
 * are no protection: never use it outside tests.
 */
public final class TestKmsClient implements KmsClient {
  /** The setting that holds the master keys. */
  public static final String KEY_LIST = "parquet.encryption.key.list";

  private static final int NONCE_BYTES = 12;
  private static final int TAG_BITS = 128;

  private final Map<String, byte[]> masterKeys = new HashMap<>();
  private final SecureRandom random = new SecureRandom();

  @Override
  public void initialize(Configuration conf, String kmsInstanceID, String kmsInstanceURL, String accessToken) {
    for (String entry : conf.getTrimmedStrings(KEY_LIST)) {
      int colon = entry.indexOf(':');
      if (colon <= 0) {
        throw new IllegalArgumentException(KEY_LIST + " holds keyId:base64key entries; one has no key id");
      }
      masterKeys.put(entry.substring(0, colon).trim(), Base64.getDecoder().decode(entry.substring(colon + 1).trim()));
    }
  }

  @Override
  public String wrapKey(byte[] keyBytes, String masterKeyIdentifier) throws KeyAccessDeniedException {
    byte[] nonce = new byte[NONCE_BYTES];
    random.nextBytes(nonce);
    byte[] sealed = run(Cipher.ENCRYPT_MODE, masterKeyIdentifier, nonce, keyBytes);
    return Base64.getEncoder().encodeToString(ByteBuffer.allocate(nonce.length + sealed.length).put(nonce).put(sealed).array());
  }

  @Override
  public byte[] unwrapKey(String wrappedKey, String masterKeyIdentifier) throws KeyAccessDeniedException {
    byte[] wrapped = Base64.getDecoder().decode(wrappedKey);
    if (wrapped.length <= NONCE_BYTES) {
      throw new KeyAccessDeniedException("a wrapped key of " + wrapped.length + " bytes is too short");
    }
    byte[] nonce = Arrays.copyOfRange(wrapped, 0, NONCE_BYTES);
    return run(Cipher.DECRYPT_MODE, masterKeyIdentifier, nonce, Arrays.copyOfRange(wrapped, NONCE_BYTES, wrapped.length));
  }

  /** AES-GCM over `input` with master key `keyId` (its id authenticated too); a missing key denies access. */
  private byte[] run(int mode, String keyId, byte[] nonce, byte[] input) throws KeyAccessDeniedException {
    byte[] key = masterKeys.get(keyId);
    if (key == null) {
      throw new KeyAccessDeniedException("no master key '" + keyId + "' in " + KEY_LIST);
    }
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(mode, new SecretKeySpec(key, "AES"), new GCMParameterSpec(TAG_BITS, nonce));
      cipher.updateAAD(keyId.getBytes(StandardCharsets.UTF_8));
      return cipher.doFinal(input);
    } catch (GeneralSecurityException e) {
      throw new KeyAccessDeniedException("AES-GCM with master key '" + keyId + "' failed", e);
    }
  }
}
