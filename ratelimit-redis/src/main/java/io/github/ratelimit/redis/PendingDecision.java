package io.github.ratelimit.redis;

import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.Decision;

/**
 * One request waiting for its decision from Redis.
 */
final class PendingDecision {

	final byte[][] keys;

	final long cost;

	/** When the caller asked, from {@link System#nanoTime()}. */
	final long start;

	final CompletableFuture<Decision> result = new CompletableFuture<>();

	volatile boolean abandoned;

	PendingDecision(byte[][] keys, long cost, long start) {
		this.keys = keys;
		this.cost = cost;
		this.start = start;
	}

	/**
	 * Give up on this decision: its caller fails, and it is not sent if it has not been yet (a caller that gave up
	 * must not be counted).
	 */
	void fail(Throwable failure) {
		this.abandoned = true;
		this.result.completeExceptionally(failure);
	}

}
