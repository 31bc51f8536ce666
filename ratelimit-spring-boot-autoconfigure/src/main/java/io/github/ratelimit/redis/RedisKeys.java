package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;

/**
 * Builds the Redis keys of a decision: {@code <prefix>:{<policy>:<key>}:<algorithm>}.
 * <p>
 * Everything between the braces is the hash tag, so all keys of one decision share a Cluster slot while different
 * clients spread over the cluster. The policy name and the key are percent-encoded where they could break that:
 * {@code %}, <code>{</code>, <code>}</code>, {@code :}, {@code #} and control characters. So a user-supplied key can
 * neither end the hash tag early nor collide with another policy's key. A tag longer than 256 bytes once encoded is
 * replaced by {@code #} and the SHA-256 of the policy and key, so a client cannot inflate Redis memory.
 */
final class RedisKeys {

	static final int MAX_TAG_BYTES = 256;

	private final String prefix;

	RedisKeys(String prefix) {
		this.prefix = prefix;
	}

	/**
	 * Return the keys of one decision, in the order the algorithm's script expects them.
	 */
	byte[][] keys(RateLimitPolicy policy, String key) {
		String base = this.prefix + ":{" + tag(policy.name(), key) + "}:";
		if (policy.algorithm() == Algorithm.SLIDING_LOG) {
			return new byte[][] { bytes(base + "log"), bytes(base + "sum") };
		}
		return new byte[][] { bytes(base + suffix(policy.algorithm())) };
	}

	/**
	 * Return the hash tag of a policy and key: what decides the Cluster slot.
	 */
	static String tag(String policy, String key) {
		String tag = encode(policy) + ":" + encode(key);
		if (tag.length() <= MAX_TAG_BYTES / 3 || bytes(tag).length <= MAX_TAG_BYTES) {
			return tag;
		}
		return "#" + sha256(policy + "\u0000" + key);
	}

	static String encode(String value) {
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
			else if (encoded != null) {
				encoded.append(c);
			}
		}
		return (encoded != null) ? encoded.toString() : value;
	}

	private static String suffix(Algorithm algorithm) {
		return switch (algorithm) {
			case FIXED -> "fw";
			case SLIDING_COUNTER -> "sc";
			case TOKEN_BUCKET -> "tb";
			case LEAKY_BUCKET -> "lb";
			case SLIDING_LOG -> "log";
		};
	}

	private static String sha256(String value) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(bytes(value));
			return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required of every Java platform", ex);
		}
	}

	static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
