package io.github.ratelimit.dynamodb;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.StoreKeys;

/**
 * Builds the partition keys ({@code pk}) of a decision's items:
 * {@code <prefix>:<policy>:<key>:<algorithm>:<parameters>}, then {@code :v=<variant>} for a variant other than the
 * declared policy ({@link StoreKeys#variantSuffix}), and {@code :<window start ms>} for the windowed
 * algorithms, whose window lives in the key as in the seed.
 * <p>
 * Policy and key are escaped ({@link StoreKeys#escape}), so a client-supplied key can neither reach into another
 * policy's names nor contain a lone surrogate (which has no UTF-8 form and would make two keys one), and bounded
 * together ({@link StoreKeys#bounded}), so a client cannot grow items. The parameters (limit and window in
 * milliseconds, and the burst for the buckets) are part of the key: after a change of limit, window or burst no
 * instance reads state counted under other parameters as its own.
 */
final class ItemKeys {

	private final String prefix;

	ItemKeys(String prefix) {
		this.prefix = prefix;
	}

	/** Return the key of a windowed item (fixed window, sliding window counter) for the window starting then. */
	String window(RateLimitPolicy policy, String key, long windowStart) {
		return base(policy, key) + ":" + windowStart;
	}

	/** Return the key of a bucket's item. */
	String bucket(RateLimitPolicy policy, String key) {
		return base(policy, key);
	}

	private String base(RateLimitPolicy policy, String key) {
		String tag = StoreKeys.bounded(StoreKeys.escape(policy.name()) + ":" + StoreKeys.escape(key));
		return this.prefix + ":" + tag + ":" + suffix(policy) + ":" + fingerprint(policy);
	}

	private static String suffix(RateLimitPolicy policy) {
		return switch (policy.algorithm()) {
			case FIXED -> "fx";
			case SLIDING_COUNTER -> "swc";
			// One meter, so switching between the two keeps the state.
			case TOKEN_BUCKET, LEAKY_BUCKET -> "tb";
			case CONCURRENCY -> "cc";
			case SLIDING_LOG -> throw DynamoDbRateLimitStore.unsupported(policy);
		};
	}

	/** The window, which gives the state its meaning (a change of limit or burst keeps it), and the variant. */
	private static String fingerprint(RateLimitPolicy policy) {
		return policy.windowMillis() + StoreKeys.variantSuffix(policy);
	}

}
