package io.github.ratelimit.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;

import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs every benchmark for a moment, in process, so that the module cannot rot between real runs of
 * {@code benchmarks/run.sh}. The figures mean nothing.
 */
class BenchmarksSmokeTests {

	@TempDir
	Path results;

	@Test
	void inMemoryBenchmarkRunsEveryLimiter() throws Exception {
		Collection<RunResult> run = run(new OptionsBuilder().include(InMemoryDecisionBenchmark.class.getSimpleName())
			.param("keys", "1", "10000")
			.threads(2)
			.result(this.results.resolve("memory.csv").toString()));
		assertThat(run).hasSize(12).allSatisfy((result) -> assertThat(result.getPrimaryResult().getScore()).isPositive());
		assertThat(render()).contains("### In-memory decision").contains("ours / Bucket4j local =")
			.contains("ours / Bucket4j's probe =");
	}

	@Test
	void redisBenchmarkRunsEveryLimiterAgainstARealRedis() throws Exception {
		try (RedisServer redis = RedisServer.start()) {
			System.setProperty("ratelimit.bench.redis", redis.host() + ":" + redis.port());
			Collection<RunResult> run = run(new OptionsBuilder().include(RedisDecisionBenchmark.class.getSimpleName())
				.param("keys", "1")
				.threads(2)
				.result(this.results.resolve("redis.csv").toString()));
			assertThat(run).hasSize(22).allSatisfy((result) -> assertThat(result.getPrimaryResult().getScore()).isPositive());
		}
		finally {
			System.clearProperty("ratelimit.bench.redis");
		}
		String report = render();
		assertThat(report).contains("### Redis decision throughput").contains("ours / floor");
	}

	private Collection<RunResult> run(ChainedOptionsBuilder builder) throws Exception {
		Options options = builder.forks(0)
			.warmupIterations(0)
			.measurementIterations(1)
			.measurementTime(TimeValue.milliseconds(150))
			.timeout(TimeValue.seconds(30))
			.resultFormat(ResultFormatType.CSV)
			.shouldFailOnError(true)
			.build();
		return new Runner(options).run();
	}

	private String render() throws Exception {
		assertThat(Files.list(this.results)).isNotEmpty();
		Report report = new Report();
		report.read(this.results);
		return report.render();
	}

}
