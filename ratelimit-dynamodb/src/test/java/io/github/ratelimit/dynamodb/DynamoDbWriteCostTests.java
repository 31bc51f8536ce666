package io.github.ratelimit.dynamodb;

import java.time.Duration;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.test.Dynalite;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What a client hammering past its limit costs in DynamoDB calls: 100 requests against a limit of 10 in one window.
 * Every call is billed (a failed conditional write too), so the figures are the write and read units; they are the
 * ones docs/stores.md gives.
 */
class DynamoDbWriteCostTests {

	private static Dynalite dynalite;

	private static String table;

	@BeforeAll
	static void startDynalite() {
		assumeTrue(Dynalite.isAvailable(), "node is not installed");
		dynalite = Dynalite.start();
		table = DynamoDbClients.newTable();
		try (DynamoDbClient client = DynamoDbClients.client(dynalite.endpoint())) {
			DynamoDbRateLimitStore.builder(client).table(table).createTable(true).build().start();
		}
	}

	@AfterAll
	static void stopDynalite() {
		if (dynalite != null) {
			dynalite.close();
		}
	}

	@ParameterizedTest(name = "{0}, deny cache {1}: {2} writes and {3} reads per 100 requests")
	@CsvSource({ "FIXED, false, 100, 0", "FIXED, true, 11, 0", "SLIDING_COUNTER, false, 100, 91",
			"SLIDING_COUNTER, true, 11, 2", "TOKEN_BUCKET, false, 10, 100", "TOKEN_BUCKET, true, 10, 11" })
	void callsPerHundredRequestsOfAClientPastItsLimit(Algorithm algorithm, boolean denyCache, long writes,
			long reads) {
		RecordedRequests recorded = new RecordedRequests();
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		// Past the first seconds of the window, when the sliding counter still reads the previous window every time.
		clock.alignTo(Duration.ofMinutes(1), 10_000);
		try (DynamoDbClient client = DynamoDbClients.builder(dynalite.endpoint())
			.overrideConfiguration((o) -> o.addExecutionInterceptor(recorded))
			.build()) {
			RateLimiter limiter = RateLimiter
				.builder(DynamoDbRateLimitStore.builder(client).table(table).clock(clock).build())
				.clock(clock)
				.denyCache(denyCache)
				.build();
			RateLimitPolicy policy = RateLimitPolicy.builder("cost-" + algorithm + "-" + denyCache)
				.algorithm(algorithm)
				.limit(10)
				.window(Duration.ofMinutes(1))
				.build();
			long admitted = 0;
			for (int i = 0; i < 100; i++) {
				if (limiter.tryAcquire(policy, "hammer").allowed()) {
					admitted++;
				}
				clock.advanceMillis(10);
			}
			assertThat(admitted).isEqualTo(10);
			System.out.printf("DynamoDB cost, %s, deny cache %s: %d writes, %d reads per 100 requests%n", algorithm,
					denyCache, recorded.updates(), recorded.reads());
			assertThat(recorded.updates()).isEqualTo(writes);
			assertThat(recorded.reads()).isEqualTo(reads);
		}
	}

}
