package io.github.ratelimit.redis;

import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.Decision;

/**
 * One request of one policy waiting for its decision from Redis.
 */
final class PendingDecision extends Pending {

	final long cost;

	final CompletableFuture<Decision> result = new CompletableFuture<>();

	PendingDecision(byte[][] keys, long cost, long start) {
		super(keys, start, 1);
		this.cost = cost;
	}

	@Override
	void fail(Throwable failure) {
		this.abandoned = true;
		this.result.completeExceptionally(failure);
	}

	@Override
	boolean isDone() {
		return this.result.isDone();
	}

}
