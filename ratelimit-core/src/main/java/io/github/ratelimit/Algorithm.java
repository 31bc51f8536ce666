package io.github.ratelimit;

/**
 * The algorithms a {@link RateLimitPolicy} can be enforced with. They differ in what they count and how much burst
 * they accept; each promises a worst case for the number of units admitted in any interval of one window (see
 * {@code docs/algorithms.md}).
 *
 * @since 0.1.0
 */
public enum Algorithm {

	/**
	 * Fixed window: counts units per window aligned to the epoch ({@code [k·window, (k+1)·window)}). At most
	 * {@code limit} per aligned window, but up to {@code 2·limit} in an interval of one window that straddles an
	 * edge. One counter per key.
	 */
	FIXED,

	/**
	 * Sliding log: remembers when each admitted request happened and how much it cost. Never more than
	 * {@code limit} in any interval of one window. State grows with the number of admitted requests in a window.
	 */
	SLIDING_LOG,

	/**
	 * Sliding window counter: the current and the previous fixed window, the previous one weighted by how much of it
	 * still overlaps the sliding window. Constant state per key; at most {@code 2·limit - 1} in an interval of one
	 * window in the worst case, and {@code limit + ⌈limit·τ/window⌉} in an interval {@code τ} that straddles an edge.
	 */
	SLIDING_COUNTER,

	/**
	 * Token bucket: a bucket of {@code burst} tokens refilled continuously at {@code limit} per {@code window}. A
	 * request takes {@code cost} tokens. At most {@code burst + limit} in an interval of one window.
	 */
	TOKEN_BUCKET,

	/**
	 * Leaky bucket as a meter: a bucket holding at most {@code burst} units that drains continuously at
	 * {@code limit} per {@code window}; a request that would overflow it is rejected. Given the same parameters it
	 * makes the same decisions as {@link #TOKEN_BUCKET}; it is offered for those who think in levels rather than
	 * tokens. It does not queue or delay requests.
	 */
	LEAKY_BUCKET,

	/**
	 * Concurrency: at most {@code limit} requests of a key in flight at once, across every instance sharing the
	 * store. An admitted request holds a slot until it gives it back when it ends, however it ends; a slot whose holder
	 * never gives it back (an instance that died mid-request) is free again {@code window} after it was taken: the
	 * window is the <em>hold time</em>. Kept as a sliding log of the slots held, so the bound is exact: never more
	 * than {@code limit} slots held at once. A rejection says nothing of when a slot frees.
	 * @since 0.4.0
	 */
	CONCURRENCY;

	/**
	 * Whether this is one of the bucket algorithms, for which {@code burst} is the capacity.
	 * @return whether {@code burst} applies
	 */
	public boolean isBucket() {
		return this == TOKEN_BUCKET || this == LEAKY_BUCKET;
	}

	/**
	 * Whether a key's state is a log of the times of its admissions ({@link #SLIDING_LOG}, and {@link #CONCURRENCY},
	 * whose log is of the slots held): each admission can be given back at its own time.
	 * @return whether the algorithm keeps a log
	 * @since 0.4.0
	 */
	public boolean keepsLog() {
		return this == SLIDING_LOG || this == CONCURRENCY;
	}

	/** Why a policy of an algorithm that {@link #keepsLog() keeps a log} cannot lease blocks. */
	String leaseRefusal() {
		return (this == CONCURRENCY)
				? "'lease' cannot apply to CONCURRENCY: a slot is held by one request until it ends, and cannot be "
						+ "taken ahead by an instance; drop 'lease'"
				: "'lease' cannot apply to SLIDING_LOG, which keeps the time of each admission: units taken ahead in "
						+ "a block would be logged at the wrong time. Use SLIDING_COUNTER, FIXED or a bucket to lease "
						+ "blocks, or drop 'lease'";
	}

	/** Refuse more slots than a concurrency limit can count: it keeps an entry per slot held, read by decisions. */
	void checkSlots(long limit) {
		if (this == CONCURRENCY && limit > RateLimitPolicy.MAX_SLIDING_LOG_ENTRIES) {
			throw new IllegalArgumentException("'limit' must be at most " + RateLimitPolicy.MAX_SLIDING_LOG_ENTRIES
					+ " for CONCURRENCY, which keeps an entry per slot held (each decision may read them all), but was "
					+ limit);
		}
	}

}
