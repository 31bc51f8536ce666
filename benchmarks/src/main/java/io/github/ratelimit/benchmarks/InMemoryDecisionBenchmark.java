package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * In-memory decision cost: ours against Bucket4j's local bucket and Resilience4j, on one hot key or 10,000 keys,
 * every limiter allowing a billion requests a second so that every decision is an admission.
 * <p>
 * {@snippet lang = "shell" :
 * java -jar benchmarks/target/benchmarks.jar InMemoryDecisionBenchmark -t 2 -prof gc
 * }
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class InMemoryDecisionBenchmark {

	@Param({ "1", "10000" })
	int keys;

	@Param({ "ratelimit-fixed", "ratelimit-token-bucket", "bucket4j", "resilience4j", "ratelimit-fixed-decision",
			"bucket4j-probe" })
	String limiter;

	private Limiter subject;

	private String[] keyNames;

	@Setup(Level.Trial)
	public void setUp() {
		this.subject = InMemoryLimiters.create(this.limiter, 1_000_000_000, Duration.ofSeconds(1), this.keys);
		this.keyNames = Keys.of(this.keys);
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		this.subject.close();
	}

	@Benchmark
	public boolean decide(ThreadCursor cursor) {
		return this.subject.tryAcquire(this.keyNames[cursor.next(this.keys)]);
	}

}
