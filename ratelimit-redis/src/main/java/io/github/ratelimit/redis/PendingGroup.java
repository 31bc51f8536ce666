package io.github.ratelimit.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One group of the all-or-nothing script waiting to be sent with others: the acquisitions of one request on one hash
 * slot to take together, or units to give back or charge. Its future completes with the group's own answers.
 */
final class PendingGroup extends Pending {

	/** The group's arguments: the mode, the number of entries, then 8 per entry (see all-or-nothing.lua). */
	final byte[][] args;

	final int entries;

	/** Whether the group takes units (and answers 6 numbers per entry) rather than giving back or charging. */
	final boolean take;

	final CompletableFuture<List<Object>> result = new CompletableFuture<>();

	PendingGroup(byte[][] keys, byte[][] args, int entries, boolean take, long start, int weight) {
		super(keys, start, weight);
		this.args = args;
		this.entries = entries;
		this.take = take;
	}

	/**
	 * Fail the caller; a group not sent yet is then never sent, so that what its caller was told holds: units it
	 * was to take are not taken, units it was to give back stay counted, and a charge tried again is not taken twice.
	 */
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
