package io.github.ratelimit.redis;

/**
 * A call waiting in a {@link Coalescer} lane to be sent with others: a decision of one policy, or one group of an
 * all-or-nothing decision, a refund or a charge.
 */
abstract class Pending {

	final byte[][] keys;

	/** When the caller asked, from {@link System#nanoTime()}. */
	final long start;

	/** How much of a script call's budget ({@code maxBatchSize}) it takes: a sliding log entry may take more. */
	final int weight;

	/** Set once the caller gave up: a call not sent yet is then never sent (a caller that gave up is not counted). */
	volatile boolean abandoned;

	Pending(byte[][] keys, long start, int weight) {
		this.keys = keys;
		this.start = start;
		this.weight = weight;
	}

	/**
	 * Give up on this call: its caller fails, and it is not sent if it has not been yet.
	 */
	abstract void fail(Throwable failure);

	abstract boolean isDone();

}
