package io.github.ratelimit.limiter;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

/**
 * Stops calling a store that keeps failing, so that an outage costs one timeout rather than one per request, and
 * lets a single probe through after a delay; the first success closes it again.
 * <p>
 * Closed: every call goes through; {@code failureThreshold} consecutive failures open it. Open: no call goes through
 * until {@code openDuration} has passed. Half-open: one call (the probe) goes through; its success closes the
 * circuit, its failure opens it again for another {@code openDuration}.
 */
final class CircuitBreaker {

	/** What {@link #tryCall(long)} allows. */
	enum Permission {

		/** The circuit is closed: call the store. */
		CALL,

		/** The circuit is half-open and this caller is the probe: call the store and report the outcome. */
		PROBE,

		/** The circuit is open: do not call the store. */
		SKIP

	}

	private static final Logger logger = System.getLogger(CircuitBreaker.class.getName());

	private final int failureThreshold;

	private final long openMillis;

	private final AtomicInteger consecutiveFailures = new AtomicInteger();

	/** When the circuit opened; {@link Long#MIN_VALUE} while closed. */
	private volatile long openedAt = Long.MIN_VALUE;

	private final AtomicBoolean probing = new AtomicBoolean();

	/** The cause of the last failure counted, so that callers failed together by one cause count once. */
	private volatile @Nullable Throwable lastCause;

	/** What the messages call the store: the store, or one part of it. */
	private final String subject;

	CircuitBreaker(int failureThreshold, long openMillis, String partition) {
		this.failureThreshold = failureThreshold;
		this.openMillis = openMillis;
		this.subject = partition.isEmpty() ? "Rate limit store" : "Rate limit store part '" + partition + "'";
	}

	Permission tryCall(long now) {
		long openedAt = this.openedAt;
		if (openedAt == Long.MIN_VALUE) {
			return Permission.CALL;
		}
		boolean waited = now - openedAt >= this.openMillis || now < openedAt;
		return (waited && this.probing.compareAndSet(false, true)) ? Permission.PROBE : Permission.SKIP;
	}

	/**
	 * Return the milliseconds until the store will be tried again, at least 1.
	 */
	long millisUntilRetry(long now) {
		long openedAt = this.openedAt;
		if (openedAt == Long.MIN_VALUE || now < openedAt) {
			return 1;
		}
		return Math.max(1, openedAt + this.openMillis - now);
	}

	boolean isOpen() {
		return this.openedAt != Long.MIN_VALUE;
	}

	void onSuccess() {
		if (this.consecutiveFailures.get() != 0) {
			this.consecutiveFailures.set(0);
		}
		if (this.openedAt != Long.MIN_VALUE) {
			this.openedAt = Long.MIN_VALUE;
			this.probing.set(false);
			this.lastCause = null;
			logger.log(Level.INFO, () -> this.subject + " answered again; circuit closed");
		}
	}

	/**
	 * Release the probe without a verdict (the call failed for a reason that says nothing about the store).
	 */
	void release(Permission permission) {
		if (permission == Permission.PROBE) {
			this.probing.set(false);
		}
	}

	void onFailure(long now, Permission permission, RuntimeException failure) {
		if (permission == Permission.PROBE) {
			this.openedAt = now;
			this.probing.set(false);
			return;
		}
		// Requests decided together (one coalesced script call) fail together with one cause: one failure, not many.
		Throwable cause = failure.getCause();
		if (cause != null) {
			if (cause == this.lastCause) {
				return;
			}
			this.lastCause = cause;
		}
		if (this.openedAt == Long.MIN_VALUE && this.consecutiveFailures.incrementAndGet() >= this.failureThreshold) {
			this.openedAt = now;
			this.consecutiveFailures.set(0);
			logger.log(Level.WARNING, () -> this.subject + " failed " + this.failureThreshold
					+ " time(s) in a row; circuit opened, the store will be tried again in " + this.openMillis
					+ "ms. Cause: " + failure.getMessage());
		}
	}

}
