package io.github.ratelimit.dynamodb;

import java.time.Duration;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.test.Dynalite;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The limiter in front of the DynamoDB store while dynalite is killed and restarted: each failure mode applies, the
 * circuit opens, and once the server is back decisions come from it again with the counts it kept.
 */
class DynamoDbFailureModeTests {

	private final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:10Z");

	private Dynalite dynalite;

	private DynamoDbClient client;

	private DynamoDbAsyncClient asyncClient;

	/** Whether the test asks through the non-blocking path, on the asynchronous client. */
	private boolean nonBlocking;

	private RateLimiter limiter;

	@BeforeEach
	void start() {
		assumeTrue(Dynalite.isAvailable(), "node is not installed");
		this.dynalite = Dynalite.startWithDataOnDisk(); // restarted with its data
		this.client = DynamoDbClients.client(this.dynalite.endpoint());
		this.asyncClient = DynamoDbClients.asyncClient(this.dynalite.endpoint());
		DynamoDbRateLimitStore store = DynamoDbRateLimitStore.builder(this.client)
			.asyncClient(this.asyncClient)
			.table(DynamoDbClients.newTable())
			.createTable(true)
			.clock(this.clock)
			.timeout(Duration.ofSeconds(2))
			.build();
		store.start();
		this.limiter = RateLimiter.builder(store)
			.clock(this.clock)
			.failureThreshold(1)
			.openDuration(Duration.ofSeconds(5))
			.denyCache(false)
			.build();
	}

	@AfterEach
	void stop() {
		if (this.client != null) {
			this.client.close();
		}
		if (this.asyncClient != null) {
			this.asyncClient.close();
		}
		if (this.dynalite != null) {
			this.dynalite.close();
		}
	}

	@ParameterizedTest(name = "non-blocking: {0}")
	@ValueSource(booleans = { false, true })
	void whileTheServerIsDownEachPolicyFollowsItsFailureModeAndAfterTheRestartTheCountsAreBack(boolean nonBlocking) {
		this.nonBlocking = nonBlocking;
		RateLimitPolicy open = policy("open", FailureMode.ALLOW);
		RateLimitPolicy closed = policy("closed", FailureMode.DENY);
		RateLimitPolicy local = policy("local", FailureMode.LOCAL);
		for (RateLimitPolicy policy : new RateLimitPolicy[] { open, closed, local }) {
			assertThat(decide(policy, "k").origin()).isEqualTo(Decision.Origin.STORE);
			assertThat(decide(policy, "k").remaining()).isEqualTo(1);
		}
		this.dynalite.kill();
		assertThat(decide(open, "k").origin()).isEqualTo(Decision.Origin.FAIL_OPEN);
		Decision denied = decide(closed, "k");
		assertThat(denied.origin()).isEqualTo(Decision.Origin.FAIL_CLOSED);
		assertThat(denied.allowed()).isFalse();
		assertThat(decide(local, "k").origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
		assertThat(this.limiter.isCircuitOpen(open, "k")).isTrue();

		this.dynalite.restart();
		this.clock.advance(Duration.ofSeconds(6)); // past the open duration: the next request probes the store
		for (RateLimitPolicy policy : new RateLimitPolicy[] { open, closed, local }) {
			Decision last = decide(policy, "k");
			assertThat(last.origin()).isEqualTo(Decision.Origin.STORE);
			assertThat(last.remaining()).as("%s: the two counted before the kill are still there", policy.name())
				.isZero();
			assertThat(decide(policy, "k").allowed()).isFalse();
		}
	}

	private Decision decide(RateLimitPolicy policy, String key) {
		return this.nonBlocking ? this.limiter.tryAcquireAsync(policy, key, 1).toCompletableFuture().join()
				: this.limiter.tryAcquire(policy, key);
	}

	private static RateLimitPolicy policy(String name, FailureMode failureMode) {
		return RateLimitPolicy.builder(name)
			.algorithm(Algorithm.FIXED)
			.limit(3)
			.window(Duration.ofMinutes(1))
			.failureMode(failureMode)
			.build();
	}

}
