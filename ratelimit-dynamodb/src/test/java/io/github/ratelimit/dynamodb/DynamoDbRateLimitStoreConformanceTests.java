package io.github.ratelimit.dynamodb;

import java.time.Duration;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.conformance.RateLimitStoreConformanceTests;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.test.Dynalite;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The whole conformance suite against dynalite, for every algorithm the store supports (SLIDING_LOG is skipped).
 */
class DynamoDbRateLimitStoreConformanceTests extends RateLimitStoreConformanceTests {

	private static Dynalite dynalite;

	private static DynamoDbClient client;

	private static DynamoDbAsyncClient asyncClient;

	private static String table;

	@BeforeAll
	static void startDynalite() {
		assumeTrue(Dynalite.isAvailable(), "node is not installed");
		dynalite = Dynalite.start();
		client = DynamoDbClients.client(dynalite.endpoint());
		asyncClient = DynamoDbClients.asyncClient(dynalite.endpoint());
		table = DynamoDbClients.newTable();
		DynamoDbRateLimitStore.builder(client).table(table).createTable(true).build().start();
	}

	@AfterAll
	static void stopDynalite() {
		if (client != null) {
			client.close();
		}
		if (asyncClient != null) {
			asyncClient.close();
		}
		if (dynalite != null) {
			dynalite.close();
		}
	}

	/**
	 * A third of the long runs, still a hundred windows and more: dynalite answers a request in milliseconds, so the
	 * whole runs would take minutes of each build.
	 */
	@Override
	protected double longRunShare() {
		return 1.0 / 3;
	}

	@Override
	protected RateLimitStore createStore(TimeSource clock) {
		return DynamoDbRateLimitStore.builder(client)
			.asyncClient(nonBlocking() ? asyncClient : null)
			.table(table)
			.clock(clock)
			.timeout(Duration.ofSeconds(10))
			.build();
	}

}
