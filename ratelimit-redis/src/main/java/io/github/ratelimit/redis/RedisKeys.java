package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.StoreKeys;

/**
 * Builds the Redis keys of a decision: {@code <prefix>:{<policy>:<key>}:<algorithm>:<parameters>}.
 * <p>
 * The window that gives the state its meaning is part of the key (in milliseconds), and so is a variant other than
 * the declared policy ({@code :v=<variant>}, {@link StoreKeys#variantSuffix}); the limit and the burst are not: a
 * window's count and a log's entries mean the same under any limit, and a bucket keeps the units of a token it was
 * counted in, so that a change of limit or burst carries the counts over (a bucket's level in whole tokens, clamped
 * to the new burst), as {@link io.github.ratelimit.store.PolicyNames#sameState} says. After a change of algorithm or
 * window (an edited {@code application.yml}, or a rolling deploy where old and new instances alternate) no instance
 * reads state counted under other parameters as its own: each counts from fresh state, and the old keys expire.
 * While two such versions run side by side, a decision takes the state of both ({@link PolicyVersions}).
 * <p>
 * Everything between the braces is the hash tag, so all keys of one decision share a Cluster slot while different
 * clients spread over the cluster. The policy name and the key are percent-encoded where they could break that:
 * {@code %}, <code>{</code>, <code>}</code>, {@code :}, {@code #} and control characters. So a user-supplied key can
 * neither end the hash tag early nor collide with another policy's key. A tag longer than
 * {@value StoreKeys#MAX_KEY_BYTES} bytes once encoded is replaced by its SHA-256 ({@link StoreKeys#bounded}), so a
 * client cannot inflate Redis memory.
 */
final class RedisKeys {

	private static final int[] CRC16_TABLE = crc16Table();

	private final String prefix;

	RedisKeys(String prefix) {
		if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
			throw new IllegalArgumentException("'keyPrefix' must not contain '{' or '}' but was '" + prefix + "'");
		}
		this.prefix = prefix;
	}

	/**
	 * Return the hash tag of a policy and key: what decides the Cluster slot. Encoded, then bounded like every
	 * key (so lone surrogates, encoded as {@code %uXXXX}, can never meet a real {@code ?}).
	 */
	static String tag(String policy, String key) {
		return StoreKeys.bounded(StoreKeys.escape(policy) + ":" + StoreKeys.escape(key));
	}

	/**
	 * Return the keys of one decision, in the order the algorithm's script expects them.
	 */
	byte[][] keys(RateLimitPolicy policy, String key) {
		return layout(policy).keys(key);
	}

	/**
	 * Return how the keys of a policy are laid out, with the parts that do not depend on the key encoded once.
	 */
	Layout layout(RateLimitPolicy policy) {
		return new Layout(this.prefix, policy);
	}

	/**
	 * Return the key of the hash that lists the parameter sets a policy and variant is decided with
	 * ({@code <prefix>:{<policy>}:versions}, or {@code <prefix>:{<policy>}:v=<variant>:versions} for a plan's or a
	 * tenant's variant; see {@link PolicyVersions}): one per variant, so that saying which set a variant uses reads
	 * nothing of the others (thousands of tenants each have their own); all of one name in one hash tag, the name
	 * alone (never a decision's), so that one script call can say it for many variants, also on a Cluster; under the
	 * store's prefix, so that {@link PrefixedKeys} clears them with the rest.
	 */
	byte[] versions(RateLimitPolicy policy) {
		return bytes(this.prefix + ":{" + StoreKeys.bounded(StoreKeys.escape(policy.name())) + "}"
				+ StoreKeys.variantSuffix(policy) + ":versions");
	}

	/**
	 * Return whether two policies of one name keep their state in the same keys: the same window and algorithm (a
	 * token and a leaky bucket are one meter), whatever their limit and burst.
	 */
	static boolean sameState(RateLimitPolicy one, RateLimitPolicy other) {
		return suffix(one.algorithm()).equals(suffix(other.algorithm())) && fingerprint(one).equals(fingerprint(other));
	}

	/**
	 * Return the Redis Cluster hash slot of a key, as Redis computes it: CRC16 (XMODEM) of the hash tag (the bytes
	 * between the first <code>{</code> and the next <code>}</code>, if not empty) or else of the whole key, modulo
	 * 16384.
	 */
	static int slot(byte[] key) {
		int from = 0;
		int to = key.length;
		for (int open = 0; open < key.length; open++) {
			if (key[open] == '{') {
				for (int close = open + 1; close < key.length; close++) {
					if (key[close] == '}') {
						if (close > open + 1) {
							from = open + 1;
							to = close;
						}
						break;
					}
				}
				break;
			}
		}
		int crc = 0;
		for (int i = from; i < to; i++) {
			crc = ((crc << 8) ^ CRC16_TABLE[((crc >>> 8) ^ (key[i] & 0xFF)) & 0xFF]) & 0xFFFF;
		}
		return crc & 16383;
	}

	/**
	 * The keys of one policy, {@code head + encoded key + tail} for each key of a decision, with the head and the
	 * tails encoded once.
	 */
	static final class Layout {

		private final String policyName;

		private final byte[] head;

		private final byte[] prefixHead;

		private final byte[][] tails;

		private final int policyTagLength;

		Layout(String prefix, RateLimitPolicy policy) {
			this.policyName = policy.name();
			String encodedPolicy = StoreKeys.escape(policy.name());
			this.head = bytes(prefix + ":{" + encodedPolicy + ":");
			this.prefixHead = bytes(prefix + ":{");
			this.policyTagLength = bytes(encodedPolicy).length + 1;
			String parameters = fingerprint(policy);
			this.tails = switch (policy.algorithm()) {
				case SLIDING_LOG -> new byte[][] { bytes("}:log:" + parameters), bytes("}:sum:" + parameters) };
				// Apart from a sliding log's, so that a policy changed from one to the other starts afresh.
				case CONCURRENCY -> new byte[][] { bytes("}:held:" + parameters), bytes("}:heldsum:" + parameters) };
				default -> new byte[][] { bytes("}:" + suffix(policy.algorithm()) + ":" + parameters) };
			};
		}

		byte[][] keys(String key) {
			byte[] head = this.head;
			byte[] keyBytes = bytes(StoreKeys.escape(key));
			if (this.policyTagLength + keyBytes.length > StoreKeys.MAX_KEY_BYTES) {
				// Replace the whole tag by a hash, so that neither a long key nor a long policy name can grow it.
				head = this.prefixHead;
				keyBytes = bytes(tag(this.policyName, key));
			}
			byte[][] keys = new byte[this.tails.length][];
			for (int i = 0; i < keys.length; i++) {
				byte[] tail = this.tails[i];
				byte[] full = new byte[head.length + keyBytes.length + tail.length];
				System.arraycopy(head, 0, full, 0, head.length);
				System.arraycopy(keyBytes, 0, full, head.length, keyBytes.length);
				System.arraycopy(tail, 0, full, head.length + keyBytes.length, tail.length);
				keys[i] = full;
			}
			return keys;
		}

	}

	/**
	 * The parameter that gives the algorithm's state its meaning, the window, and the variant, which counts apart.
	 */
	static String fingerprint(RateLimitPolicy policy) {
		return policy.windowMillis() + StoreKeys.variantSuffix(policy);
	}

	private static String suffix(Algorithm algorithm) {
		// Names whose keys (with the parameters after them) no earlier state format used, so that no script meets
		// state it cannot read.
		return switch (algorithm) {
			case FIXED -> "fx";
			case SLIDING_COUNTER -> "swc";
			// One meter, so switching between the two keeps the state.
			case TOKEN_BUCKET, LEAKY_BUCKET -> "tb";
			case SLIDING_LOG -> "log";
			case CONCURRENCY -> "held";
		};
	}

	static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	private static int[] crc16Table() {
		int[] table = new int[256];
		for (int i = 0; i < 256; i++) {
			int crc = i << 8;
			for (int bit = 0; bit < 8; bit++) {
				crc = ((crc & 0x8000) != 0) ? (crc << 1) ^ 0x1021 : crc << 1;
			}
			table[i] = crc & 0xFFFF;
		}
		return table;
	}

}
