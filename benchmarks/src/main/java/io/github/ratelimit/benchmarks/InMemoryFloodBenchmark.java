package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a new key costs the in-memory store when it is full of live keys: every request of the flood is a key never
 * seen, so each one evicts another. If finding the key to evict or an expired one scanned the keys, the cost would
 * grow with the bound; it should not.
 * <p>
 * {@snippet lang = "shell" :
 * java -jar benchmarks/target/benchmarks.jar InMemoryFloodBenchmark -prof gc
 * }
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class InMemoryFloodBenchmark {

	/** The store's bound, per policy and in all; it is filled before the measurement. */
	@Param({ "1000", "1000000" })
	int maxKeys;

	private final RateLimitPolicy policy = RateLimitPolicy.builder("flooded")
		.limit(10)
		.window(Duration.ofDays(1))
		.build();

	private InMemoryRateLimitStore store;

	private long next;

	@Setup(Level.Trial)
	public void fill() {
		this.store = InMemoryRateLimitStore.builder().maxKeys(this.maxKeys).maxKeysPerPolicy(this.maxKeys).build();
		for (int i = 0; i < this.maxKeys; i++) {
			this.store.tryAcquire(this.policy, "live-" + i, 1);
		}
	}

	@Benchmark
	public boolean newKey() {
		return this.store.tryAcquire(this.policy, "flood-" + this.next++, 1).allowed();
	}

}
