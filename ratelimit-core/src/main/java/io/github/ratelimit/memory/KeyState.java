package io.github.ratelimit.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * The mutable state of one key under one policy. Every method is called with this state {@link #lock() locked}; a
 * state that was evicted is {@link #retired} and must not be used again, so a thread that finds it retired looks
 * the key up afresh.
 * <p>
 * The lock is a small spin lock rather than a monitor: a decision holds it for a few dozen nanoseconds, so under
 * contention on a hot key spinning briefly beats parking, and it never inflates. A waiter yields its time slice
 * after a short spin, in case the holder was descheduled.
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

	/** Whether this state was removed from its table. Guarded by the lock. */
	boolean retired;

	/** What {@code acquire} answers, when not detailed, for units taken; its other values mean nothing. */
	static final Decision PERMITTED = new Decision(true, 0, 0, 0, 0, Decision.Origin.STORE);

	/** What {@code acquire} answers, when not detailed, for units not taken. */
	static final Decision DENIED = new Decision(false, 0, 0, 0, 0, Decision.Origin.STORE);

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
	 * @param detailed whether the caller needs the whole decision; if not, the answer is {@link #PERMITTED} or
	 * {@link #DENIED}, so that nothing is allocated
	 * @return the decision
	 */
	abstract Decision acquire(RateLimitPolicy policy, long now, long cost, boolean detailed);

	static Decision admit(RateLimitPolicy policy, boolean detailed, long remaining, long resetAfterMillis) {
		return detailed ? new Decision(true, policy.capacity(), remaining, resetAfterMillis, 0, Decision.Origin.STORE)
				: PERMITTED;
	}

	static Decision reject(RateLimitPolicy policy, boolean detailed, long remaining, long resetAfterMillis,
			long retryAfterMillis) {
		return detailed ? new Decision(false, policy.capacity(), remaining, resetAfterMillis, retryAfterMillis,
				Decision.Origin.STORE) : DENIED;
	}

	/**
	 * Return the time from which this state is equivalent to a fresh one and can be dropped.
	 * @param policy the policy
	 * @return the expiry in milliseconds since the epoch
	 */
	abstract long expiresAt(RateLimitPolicy policy);

	static KeyState create(Algorithm algorithm) {
		return switch (algorithm) {
			case FIXED -> new FixedWindow();
			case SLIDING_LOG -> new SlidingLog();
			case SLIDING_COUNTER -> new SlidingCounter();
			case TOKEN_BUCKET -> new TokenBucket();
			case LEAKY_BUCKET -> new LeakyBucket();
		};
	}

}
