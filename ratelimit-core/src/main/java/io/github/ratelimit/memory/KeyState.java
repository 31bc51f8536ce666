package io.github.ratelimit.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * The mutable state of one key under one policy. Every method is called with this state {@link #lock() locked}; a
 * state that was evicted is {@link #retired} and must not be used again, so a thread that finds it retired looks
 * the key up afresh.
 * <p>
 * The lock is a small spin lock rather than a monitor: a decision holds it for a few dozen nanoseconds, so under
 * contention on a hot key spinning briefly beats parking, and it never inflates. A waiter yields its time slice
 * after a short spin, in case the holder was descheduled.
 * <p>
 * A state also carries the bookkeeping of its {@link PolicyTable} (its place in the table's expiry heap and rank
 * lists), intrusively, so that tracking a key allocates nothing beyond the state itself.
 */
abstract class KeyState {

	private static final VarHandle LOCK;

	static {
		try {
			LOCK = MethodHandles.lookup().findVarHandle(KeyState.class, "lock", int.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private static final int SPINS_BEFORE_YIELDING = 128;

	@SuppressWarnings("unused") // accessed through LOCK
	private volatile int lock;

	/** Whether this state was removed from its table. Guarded by the lock, and set under the table's lock too. */
	boolean retired;

	/**
	 * The rank of the most units this state has held against its client: {@link #rankOf(long)} of the largest
	 * {@code capacity - remaining - returnCharge} after any of its decisions. Only rises. Guarded by the lock.
	 */
	int rank;

	/**
	 * The units this state was charged with when inserted, from its table's memory of evicted keys: they do not
	 * count for its {@link #rank}, so that what collisions charged a flood's keys never ranks them above an
	 * established client. Set before the state is published.
	 */
	long returnCharge;

	/** The key, to remove this state from its table. */
	final String key;

	// The table's bookkeeping, guarded by the table's lock.

	/** The rank list this state is on; at most {@link #rank}, which may have risen since. */
	int listedRank;

	/** Neighbours on the rank list, oldest first. */
	@Nullable KeyState previous;

	@Nullable KeyState next;

	/** Index in the table's expiry heap. */
	int heapIndex;

	/** The expiry this state is ordered by in the heap: at most its real expiry, which only moves later. */
	long listedExpiry;

	KeyState(String key) {
		this.key = key;
	}

	final void lock() {
		if (!LOCK.compareAndSet(this, 0, 1)) {
			lockContended();
		}
	}

	private void lockContended() {
		int spins = 0;
		do {
			if (++spins < SPINS_BEFORE_YIELDING) {
				Thread.onSpinWait();
			}
			else {
				Thread.yield();
			}
		}
		while (this.lock != 0 || !LOCK.compareAndSet(this, 0, 1));
	}

	final void unlock() {
		LOCK.setRelease(this, 0);
	}

	/**
	 * Take {@code cost} units if available at {@code now}.
	 * @param policy the policy
	 * @param now the current time in milliseconds
	 * @param cost the cost, at least 1
	 * @return the decision
	 */
	abstract Decision acquire(RateLimitPolicy policy, long now, long cost);

	/**
	 * Record the units held against the client after {@code decision}, made by this state.
	 * @param decision the decision just made
	 * @return whether the {@link #rank} rose, so that the table must move this state to a higher rank list
	 */
	final boolean raiseRank(Decision decision) {
		// A rejected client is pressing on its limit: it ranks above every key that merely holds as many units, so
		// that with a limit of 1 a used-up client who tried again is not as cheap to evict as a flood's keys.
		int rank = Math.min(63, rankOf(Math.max(0, decision.limit() - decision.remaining() - this.returnCharge))
				+ (decision.allowed() ? 0 : 1));
		if (rank <= this.rank) {
			return false;
		}
		this.rank = rank;
		return true;
	}

	/**
	 * Return the rank of a state holding {@code held} units against its client: 0 for none, else
	 * {@code 1 + ⌊log2 held⌋}, so rank 1 is exactly one unit, rank 2 two or three, rank 3 four to seven, and so on.
	 * @param held the units held, {@code capacity - remaining}, not negative
	 * @return the rank, at most 63
	 */
	static int rankOf(long held) {
		return Long.SIZE - Long.numberOfLeadingZeros(held);
	}

	/**
	 * Return the units this state holds against its client at {@code now}, without taking any: {@code capacity -
	 * remaining} as a request that can never pass sees it, which rounds towards holding more.
	 * @param policy the policy
	 * @param now the current time in milliseconds
	 * @return the units held, from 0 to the capacity
	 */
	final long held(RateLimitPolicy policy, long now) {
		long capacity = policy.capacity();
		return Math.max(0, Math.min(capacity, capacity - acquire(policy, now, capacity + 1).remaining()));
	}

	/**
	 * Return the time from which this state is equivalent to a fresh one and can be dropped.
	 * @param policy the policy
	 * @return the expiry in milliseconds since the epoch
	 */
	abstract long expiresAt(RateLimitPolicy policy);

	/**
	 * Give back {@code cost} units admitted at time {@code at}, if they still count: to their window, never more
	 * than it holds.
	 */
	abstract void refund(RateLimitPolicy policy, long at, long cost);

	/**
	 * Take {@code cost} more units for an admission made at time {@code at} that turned out to cost more, whatever
	 * is left: the state may go over its limit (in debt) until its window ends or it refills. Nothing if the
	 * admission's window has passed.
	 */
	abstract void charge(RateLimitPolicy policy, long at, long cost);

	/**
	 * Create the fresh state of a key.
	 * @param algorithm the policy's algorithm
	 * @param key the key
	 * @return the state
	 */
	static KeyState create(Algorithm algorithm, String key) {
		return switch (algorithm) {
			case FIXED -> new FixedWindow(key);
			// A slot held is an entry of the log, given back at its own time, or leaving it a hold time after.
			case SLIDING_LOG, CONCURRENCY -> new SlidingLog(key);
			case SLIDING_COUNTER -> new SlidingCounter(key);
			// The leaky bucket is the token bucket's mirror image (level = capacity - tokens): same decisions.
			case TOKEN_BUCKET, LEAKY_BUCKET -> new TokenBucket(key);
		};
	}

}
