package io.github.ratelimit.benchmarks;

import java.util.concurrent.ThreadLocalRandom;

import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Walks the keys from a random starting point per thread, so that threads do not move in lockstep.
 */
@State(Scope.Thread)
public class ThreadCursor {

	private int position = ThreadLocalRandom.current().nextInt(1 << 20);

	int next(int bound) {
		int next = this.position++;
		return (bound == 1) ? 0 : (next & Integer.MAX_VALUE) % bound;
	}

}
