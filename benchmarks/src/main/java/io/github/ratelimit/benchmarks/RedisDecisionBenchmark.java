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
 * Redis decision cost against a local {@code redis-server}: ours (each algorithm) against Bucket4j's Lettuce proxy
 * manager and the floor (a bare EVALSHA), one hot key or 10,000 keys, with a limit that admits everything
 * ({@code allowed}) or nearly nothing ({@code rejected}). Run the thread counts with {@code -t}; Redis commands per
 * decision are printed at the end of each trial.
 * <p>
 * {@snippet lang = "shell" :
 * RATELIMIT_BENCH_REDIS=127.0.0.1:6390 java -jar benchmarks/target/benchmarks.jar RedisDecisionBenchmark -t 16
 * }
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class RedisDecisionBenchmark {

	@Param({ "1", "10000" })
	int keys;

	@Param({ "allowed", "rejected" })
	String outcome;

	@Param({ "ratelimit-fixed", "ratelimit-sliding-log", "ratelimit-sliding-counter", "ratelimit-token-bucket",
			"ratelimit-leaky-bucket", "ratelimit-fixed-uncoalesced", "ratelimit-fixed-deny-cache", "ratelimit-fixed-lease",
			"bucket4j", "bucket4j-batching", "floor" })
	String limiter;

	private Limiter subject;

	private String[] keyNames;

	private CommandCounter commands;

	@Setup(Level.Trial)
	public void setUp() {
		KeyspaceReset.beforeTrial(RedisLimiters.server());
		boolean allowed = this.outcome.equals("allowed");
		// Allowed: a limit nothing reaches, in windows of 1 s unless -Dbench.allowedWindowSeconds says otherwise
		// (on 10,000 keys a 1 s window starts anew on about every other request). Rejected: one request per hour, so
		// all but the first are rejected.
		Duration allowedWindow = Duration.ofSeconds(Long.getLong("bench.allowedWindowSeconds", 1));
		this.subject = RedisLimiters.create(this.limiter, allowed ? 1_000_000_000 : 1,
				allowed ? allowedWindow : Duration.ofHours(1));
		this.keyNames = Keys.of(this.keys);
		this.commands = new CommandCounter(RedisLimiters.server());
	}

	@Setup(Level.Iteration)
	public void resetCounts() {
		this.commands.start();
	}

	@TearDown(Level.Iteration)
	public void countCommands() {
		this.commands.stop();
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		this.commands.report(this.limiter + " keys=" + this.keys + " " + this.outcome);
		this.subject.close();
	}

	@Benchmark
	public boolean decide(ThreadCursor cursor) {
		this.commands.decided();
		return this.subject.tryAcquire(this.keyNames[cursor.next(this.keys)]);
	}

}
