package io.github.ratelimit.conformance;

import java.util.Arrays;

/**
 * The times (in limiter time, milliseconds) at which units were admitted, and the largest number admitted in any
 * interval of a given length: the boundary-burst measurement.
 * <p>
 * The maximum over all intervals is reached by one whose right end is an admission, so a two-pointer sweep over the
 * sorted times finds it in linear time.
 */
public final class AdmissionLog {

	private long[] times = new long[64];

	private int size;

	public synchronized void admitted(long time, long units) {
		for (long i = 0; i < units; i++) {
			if (this.size == this.times.length) {
				this.times = Arrays.copyOf(this.times, this.size * 2);
			}
			this.times[this.size++] = time;
		}
	}

	public synchronized int count() {
		return this.size;
	}

	/**
	 * Return the most units admitted in any half-open interval {@code (t - window, t]}.
	 */
	public int maxInHalfOpenWindow(long window) {
		return maxInWindow(window, false).count();
	}

	/**
	 * Return the most units admitted in any closed interval {@code [t - window, t]}.
	 */
	public int maxInClosedWindow(long window) {
		return maxInWindow(window, true).count();
	}

	public synchronized Witness maxInWindow(long window, boolean closed) {
		long[] sorted = Arrays.copyOf(this.times, this.size);
		Arrays.sort(sorted);
		return maxInWindow(sorted, window, closed);
	}

	static Witness maxInWindow(long[] sorted, long window, boolean closed) {
		int best = 0;
		int bestFrom = 0;
		int bestTo = -1;
		int from = 0;
		for (int to = 0; to < sorted.length; to++) {
			while (closed ? sorted[to] - sorted[from] > window : sorted[to] - sorted[from] >= window) {
				from++;
			}
			if (to - from + 1 > best) {
				best = to - from + 1;
				bestFrom = from;
				bestTo = to;
			}
		}
		return (best == 0) ? new Witness(0, 0, 0) : new Witness(best, sorted[bestFrom], sorted[bestTo]);
	}

	/**
	 * The largest count and the first and last admission of an interval that holds it.
	 */
	public record Witness(int count, long first, long last) {
	}

}
