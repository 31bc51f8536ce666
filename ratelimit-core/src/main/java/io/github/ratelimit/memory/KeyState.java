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

	// What the last acquire found, kept here rather than returned so that a caller that needs only whether the
	// request passed allocates nothing. Guarded by the lock, read before it is released.

	private long remaining;

	private long resetAfterMillis;

	private long retryAfterMillis;

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
	 * Take {@code cost} units if available at {@code now}, and record the outcome through {@link #admit} or
	 * {@link #reject}.
	 * @param policy the policy
	 * @param now the current time in milliseconds
	 * @param cost the cost, at least 1
	 * @return whether the units were taken
	 */
	abstract boolean acquire(RateLimitPolicy policy, long now, long cost);

	final boolean admit(long remaining, long resetAfterMillis) {
		this.remaining = remaining;
		this.resetAfterMillis = resetAfterMillis;
		this.retryAfterMillis = 0;
		return true;
	}

	final boolean reject(long remaining, long resetAfterMillis, long retryAfterMillis) {
		this.remaining = remaining;
		this.resetAfterMillis = resetAfterMillis;
		this.retryAfterMillis = retryAfterMillis;
		return false;
	}

	/**
	 * Return the decision of the last {@link #acquire}.
	 * @param policy the policy it was made under
	 * @param allowed what it returned
	 * @return the decision
	 */
	final Decision decision(RateLimitPolicy policy, boolean allowed) {
		return new Decision(allowed, policy.capacity(), this.remaining, this.resetAfterMillis, this.retryAfterMillis,
				Decision.Origin.STORE);
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
