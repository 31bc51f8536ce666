package io.github.ratelimit.store;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

import io.github.ratelimit.RateLimitPolicy;

/**
 * The one bound on the size of counter keys, so that a client cannot inflate a store's memory with huge keys: a key
 * longer than {@value #MAX_KEY_BYTES} UTF-8 bytes is replaced by its SHA-256. The limiter bounds every key before it
 * reaches a store; a store that builds longer names of its own (a Redis hash tag holds the policy too) bounds them
 * with the same method.
 *
 * @since 0.1.0
 */
public final class StoreKeys {

	/** Keys longer than this many UTF-8 bytes are replaced by their SHA-256. */
	public static final int MAX_KEY_BYTES = 256;

	/**
	 * Marks a hashed key. A key that happens to start with it is hashed too, so a short key can never equal the
	 * hashed form of a long one.
	 */
	public static final String HASHED_PREFIX = "\u0000sha256:";

	private StoreKeys() {
	}

	/**
	 * Return the key itself if it is at most {@value #MAX_KEY_BYTES} UTF-8 bytes long, else its hashed form. Two
	 * distinct strings never share a form: the hash is over the string's UTF-16 code units, so that lone surrogates
	 * (which UTF-8 cannot encode and would turn into {@code ?}) keep keys apart.
	 * @param key the key
	 * @return the key or its hashed form, at most {@value #MAX_KEY_BYTES} bytes
	 */
	public static String bounded(String key) {
		// Up to 85 chars cannot exceed 256 UTF-8 bytes (3 bytes per char at most), the common case.
		if (key.length() <= MAX_KEY_BYTES / 3 && !key.startsWith(HASHED_PREFIX)) {
			return key;
		}
		if (!key.startsWith(HASHED_PREFIX) && key.length() <= MAX_KEY_BYTES
				&& key.getBytes(StandardCharsets.UTF_8).length <= MAX_KEY_BYTES) {
			return key;
		}
		return HASHED_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(sha256(key));
	}

	private static byte[] sha256(String key) {
		byte[] units = new byte[key.length() * 2];
		for (int i = 0; i < key.length(); i++) {
			char c = key.charAt(i);
			units[2 * i] = (byte) (c >> 8);
			units[2 * i + 1] = (byte) c;
		}
		try {
			return MessageDigest.getInstance("SHA-256").digest(units);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required of every Java platform", ex);
		}
	}

	/**
	 * Return what keeps a policy's variant (a plan's, a tenant's) apart in the names a store builds: nothing for the
	 * policy as declared, so its names stay those of a policy without variants, else {@code :v=} and the escaped,
	 * bounded variant. Two variants with the same parameters therefore never share a counter.
	 * @param policy the policy
	 * @return {@code ""} or {@code :v=<variant>}
	 */
	public static String variantSuffix(RateLimitPolicy policy) {
		return policy.variant().isEmpty() ? "" : ":v=" + bounded(escape(policy.variant()));
	}

	/**
	 * Return the value with {@code %}, <code>{</code>, <code>}</code>, {@code :}, {@code #}, control characters and lone
	 * surrogates percent-encoded ({@code %XX}, and {@code %uXXXX} for a lone surrogate). Stores join escaped parts with
	 * {@code :} (no client-supplied key can then reach into another policy's names) and every result has a UTF-8 form
	 * (a lone surrogate has none: encoders turn it into {@code ?}, which would make two keys one).
	 * @param value the value
	 * @return the escaped value, the value itself when nothing needed escaping
	 */
	public static String escape(String value) {
		StringBuilder encoded = null;
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '%' || c == '{' || c == '}' || c == ':' || c == '#' || c < 0x20 || c == 0x7f) {
				if (encoded == null) {
					encoded = new StringBuilder(value.length() + 8).append(value, 0, i);
				}
				encoded.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
					.append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
			}
			else if (Character.isSurrogate(c) && !isPairedSurrogate(value, i)) {
				// A lone surrogate has no UTF-8 form (it would become '?' and collide with a real '?').
				if (encoded == null) {
					encoded = new StringBuilder(value.length() + 8).append(value, 0, i);
				}
				encoded.append("%u").append(String.format("%04X", (int) c));
			}
			else if (encoded != null) {
				encoded.append(c);
			}
		}
		return (encoded != null) ? encoded.toString() : value;
	}

	private static boolean isPairedSurrogate(String value, int index) {
		char c = value.charAt(index);
		if (Character.isHighSurrogate(c)) {
			return index + 1 < value.length() && Character.isLowSurrogate(value.charAt(index + 1));
		}
		return index > 0 && Character.isHighSurrogate(value.charAt(index - 1));
	}

}
