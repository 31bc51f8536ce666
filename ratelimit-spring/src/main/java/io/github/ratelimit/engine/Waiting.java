package io.github.ratelimit.engine;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * A policy's waiting instead of rejecting ({@code max-wait}, {@code max-queued}): how long a request over the limit
 * may wait for its turn, and how many of a key's requests may wait at once on an instance.
 * <p>
 * A bucket's turn is reserved in the store, in the same call as the other limits: the store counts the bucket with a
 * reserve, its burst raised by the whole tokens its refill brings in the longest wait ({@link #reserve}). A key's
 * tokens there are its real tokens plus the reserve, whatever happens (both refill at the same rate, and both are
 * clamped at their burst), so a request the real bucket would reject passes into the reserve, and the refill repays
 * it after exactly the wait that its turn would come after; concurrent requests reserve one after the other, and
 * pass in that order at the bucket's rate. What it answers is converted back to the real bucket ({@link #real}).
 * A window has no future to reserve: its request waits until the window has room, and is decided once more.
 *
 * @param maxWaitMillis the longest wait
 * @param maxQueued the most requests of a key waiting at once on this instance
 */
record Waiting(long maxWaitMillis, int maxQueued, Map<RateLimitPolicy, RateLimitPolicy> reserving) {

	/** The longest wait: longer holds a request past the timeouts of most clients and proxies. */
	static final Duration MAX_WAIT = Duration.ofMinutes(1);

	/** The most waiting requests per key and instance. */
	static final int MAX_QUEUED = 10_000;

	/** What {@code max-queued} is when not set. */
	static final int DEFAULT_QUEUED = 20;

	/** The most bucket variants kept: a tenant's own limits make more, built again when not kept. */
	private static final int KEPT_VARIANTS = 256;

	/**
	 * Read a policy's waiting.
	 * @return its waiting, or {@code null} if it waits for nothing
	 * @throws InvalidRateLimitPolicyException if a value is out of bounds, or cannot apply
	 */
	static @Nullable Waiting parse(PolicySources values, String name, String where, RateLimitPolicy policy,
			@Nullable Penalty penalty) {
		String text = values.getOrDefault("max-wait", String.class, "").trim();
		Long queued = values.get("max-queued", Long.class);
		if (text.isEmpty()) {
			if (queued != null) {
				throw PolicyParser.invalid(name, where, "'max-queued' applies with 'max-wait' only"
						+ values.fromProperty("'max-queued'"));
			}
			return null;
		}
		Duration wait = PolicyParser.parseDuration(text);
		if (wait == null || wait.compareTo(MAX_WAIT) > 0 || wait.toMillis() < 1) {
			throw PolicyParser.invalid(name, where, "'max-wait' must be a duration of at least 1ms and at most a "
					+ "minute, but was '" + text + "'" + values.fromProperty("'max-wait'"));
		}
		if (queued != null && (queued < 1 || queued > MAX_QUEUED)) {
			throw PolicyParser.invalid(name, where, "'max-queued' must be from 1 to " + MAX_QUEUED + ", but was "
					+ queued + values.fromProperty("'max-queued'"));
		}
		if (policy.lease() != 0) {
			throw PolicyParser.invalid(name, where, "'lease' cannot apply with 'max-wait': a leased block admits or "
					+ "rejects at once" + values.fromProperty("'lease'"));
		}
		if (penalty != null && penalty.locks()) {
			throw PolicyParser.invalid(name, where, "'penalty' cannot apply with 'max-wait': they are two answers to "
					+ "a client over the limit, locking it out or letting it wait; choose one"
					+ values.fromProperty("'penalty'"));
		}
		Waiting waiting = new Waiting(wait.toMillis(), (queued != null) ? queued.intValue() : DEFAULT_QUEUED,
				new ConcurrentHashMap<>());
		if (policy.algorithm().isBucket() && waiting.reserve(policy) == 0) {
			throw PolicyParser.invalid(name, where, "'max-wait' of " + text + " is shorter than the time this bucket "
					+ "takes to refill one token (" + tokenMillis(policy, 1) + " ms): no request could wait"
					+ values.fromProperty("'max-wait'"));
		}
		try {
			waiting.variant(policy);
		}
		catch (IllegalArgumentException ex) {
			throw PolicyParser.invalid(name, where, "'max-wait' of " + text + " makes a reserve this bucket cannot "
					+ "count (" + ex.getMessage() + "); wait less" + values.fromProperty("'max-wait'"));
		}
		return waiting;
	}

	/**
	 * The whole tokens a bucket's refill brings in the longest wait: its reserve. None for a window.
	 */
	long reserve(RateLimitPolicy policy) {
		if (!policy.algorithm().isBucket()) {
			return 0;
		}
		long limit = policy.limit();
		long window = policy.windowMillis();
		return (Math.multiplyHigh(this.maxWaitMillis, limit) == 0 && this.maxWaitMillis * limit >= 0)
				? this.maxWaitMillis * limit / window : Long.MAX_VALUE / 4;
	}

	/** The policy a request of it is counted under: a bucket with its reserve, or the policy itself. */
	RateLimitPolicy reserving(RateLimitPolicy policy) {
		if (reserve(policy) == 0) {
			return policy;
		}
		RateLimitPolicy variant = this.reserving.get(policy);
		if (variant != null) {
			return variant;
		}
		try {
			variant = variant(policy);
		}
		catch (IllegalArgumentException ex) {
			return policy; // a tenant's or plan's bucket whose reserve cannot be counted: it rejects at once
		}
		if (this.reserving.size() < KEPT_VARIANTS) {
			this.reserving.put(policy, variant);
		}
		return variant;
	}

	private RateLimitPolicy variant(RateLimitPolicy policy) {
		long reserve = reserve(policy);
		return (reserve == 0) ? policy : policy.toBuilder().burst(Math.addExact(policy.burst(), reserve)).build();
	}

	/**
	 * The real bucket's decision, from the decision of the bucket it was counted under.
	 * @param policy the real policy
	 * @param counted the policy it was counted under: the bucket with its reserve, or the real one
	 * @param decision the decision under it
	 * @return the decision as the real bucket would have made it: what it admitted into the reserve shows no unit
	 * left, and a rejection waits for the reserve too
	 */
	static Decision real(RateLimitPolicy policy, RateLimitPolicy counted, Decision decision) {
		long reserve = counted.burst() - policy.burst();
		if (reserve <= 0 || !decision.isKnown()) {
			return decision;
		}
		long remaining = Math.max(0, decision.remaining() - reserve);
		if (decision.allowed()) {
			return new Decision(true, policy.capacity(), remaining, decision.resetAfterMillis(), 0,
					(decision.remaining() >= reserve) ? decision.nextUnitAfterMillis() : wait(policy, counted, decision),
					decision.origin());
		}
		long retry = (decision.retryAfterMillis() == Decision.NEVER) ? Decision.NEVER
				: decision.retryAfterMillis() + tokenMillis(policy, reserve);
		return new Decision(false, policy.capacity(), remaining, decision.resetAfterMillis(), retry,
				decision.nextUnitAfterMillis(), decision.origin());
	}

	/**
	 * How long a request the bucket with its reserve admitted waits for its turn: until the real bucket would have
	 * held what it took, which is when the reserve is whole again; {@code 0} if it took none of the reserve (or was
	 * counted under the real bucket). A store that does not tell when its next unit comes is taken as a whole
	 * token's refill away.
	 */
	static long wait(RateLimitPolicy policy, RateLimitPolicy counted, Decision admitted) {
		long reserve = counted.burst() - policy.burst();
		if (reserve <= 0 || admitted.remaining() >= reserve) {
			return 0;
		}
		long next = (admitted.nextUnitAfterMillis() > 0) ? admitted.nextUnitAfterMillis() : tokenMillis(policy, 1);
		return Math.min(next + tokenMillis(policy, reserve - admitted.remaining() - 1), tokenMillis(policy, reserve));
	}

	/** The milliseconds a bucket takes to refill this many tokens, rounded up. */
	private static long tokenMillis(RateLimitPolicy policy, long tokens) {
		long window = policy.windowMillis();
		long limit = policy.limit();
		return (tokens == 0) ? 0 : (Math.multiplyHigh(tokens, window) == 0 && tokens * window >= 0)
				? (tokens * window + limit - 1) / limit : Long.MAX_VALUE / 4;
	}

}
