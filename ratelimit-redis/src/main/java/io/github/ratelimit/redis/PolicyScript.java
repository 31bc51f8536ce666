package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;

import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * What every script call of one policy shares: the script, the key layout, the arguments that do not change between
 * calls, when decisions are coalesced, the policy's lanes, and what is known of its other parameter sets.
 */
final class PolicyScript {

	static final byte[] EMPTY = new byte[0];

	final RateLimitPolicy policy;

	final RateLimitScript script;

	final RedisKeys.Layout layout;

	/** The arguments before the costs; the first, the time, is filled in per call. */
	final byte[][] args;

	final Coalescer.@Nullable Lanes<PendingDecision> lanes;

	/** The policy's other parameter sets in use by other instances. */
	final PolicyVersions.View versions;

	/** Whether this instance decides with this policy itself (rather than knowing it as another instance's set). */
	volatile boolean own;

	/** When a decision last used it, in the store's local milliseconds: idle ones are dropped. */
	volatile long lastUsed;

	PolicyScript(RateLimitPolicy policy, RedisKeys keys, byte[] leastTtl, @Nullable Coalescer coalescer,
			PolicyVersions versions) {
		this.policy = policy;
		this.script = RateLimitScript.of(policy.algorithm());
		this.layout = keys.layout(policy);
		this.args = new byte[][] { EMPTY, bytes(policy.limit()), bytes(policy.windowMillis()), bytes(policy.burst()),
				bytes(policy.unitsPerToken()), bytes(policy.unitsPerMilli()), leastTtl };
		this.lanes = (coalescer != null) ? coalescer.lanes(this) : null;
		this.versions = versions.view(policy);
	}

	static byte[] bytes(long value) {
		return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
	}

}
