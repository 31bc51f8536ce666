package io.github.ratelimit.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class ReportTests {

	private static final String HEADER = "\"Benchmark\",\"Mode\",\"Threads\",\"Samples\",\"Score\",\"Score Error (99.9%)\","
			+ "\"Unit\",\"Param: keys\",\"Param: limiter\",\"Param: outcome\"\n";

	@TempDir
	Path results;

	@Test
	void roundsOfTheSameBenchmarkAreAveragedBeforeRatiosAreTaken() throws Exception {
		Files.writeString(this.results.resolve("redis-t16-round1.csv"),
				HEADER + row("ratelimit-fixed", 100_000) + row("bucket4j", 40_000) + row("floor", 100_000));
		Files.writeString(this.results.resolve("redis-t16-round2.csv"),
				HEADER + row("ratelimit-fixed", 60_000) + row("bucket4j", 40_000) + row("floor", 100_000));
		Report report = new Report();
		report.read(this.results);
		String rendered = report.render();
		assertThat(rendered).contains("| 10000 | allowed | 16 | 80,000 |")
			.contains("ours / Bucket4j = 2.00×")
			.doesNotContain("60,000")
			.doesNotContain("100,000 | 40,000 | 100,000");
	}

	private static String row(String limiter, double score) {
		return "\"io.github.ratelimit.benchmarks.RedisDecisionBenchmark.decide\",\"thrpt\",16,5," + score
				+ ",1000.0,\"ops/s\",10000," + limiter + ",allowed\n";
	}

}
