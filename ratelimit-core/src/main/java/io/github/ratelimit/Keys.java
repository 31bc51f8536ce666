package io.github.ratelimit;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Bounds the size of counter keys, so that a client cannot inflate a store's memory with huge keys.
 */
final class Keys {

	/** Keys longer than this many UTF-8 bytes are replaced by their SHA-256. */
	static final int MAX_KEY_BYTES = 256;

	/**
	 * Marks a hashed key. A key that happens to start with it is hashed too, so a short key can never equal the
	 * hashed form of a long one.
	 */
	static final String HASHED_PREFIX = "\u0000sha256:";

	private Keys() {
	}

	static String bounded(String key) {
		// Up to 85 chars cannot exceed 256 UTF-8 bytes (3 bytes per char at most), the common case.
		if (key.length() <= MAX_KEY_BYTES / 3 && !key.startsWith(HASHED_PREFIX)) {
			return key;
		}
		byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
		if (bytes.length <= MAX_KEY_BYTES && !key.startsWith(HASHED_PREFIX)) {
			return key;
		}
		return HASHED_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(sha256(bytes));
	}

	private static byte[] sha256(byte[] bytes) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(bytes);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required of every Java platform", ex);
		}
	}

}
