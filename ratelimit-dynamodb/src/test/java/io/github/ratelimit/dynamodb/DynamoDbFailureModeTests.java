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
import org.junit.jupiter.api.Test;
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

	private RateLimiter limiter;

	@BeforeEach
	void start() {
		assumeTrue(Dynalite.isAvailable(), "node is not installed");
		this.dynalite = Dynalite.start();
		this.client = DynamoDbClients.client(this.dynalite.endpoint());
		DynamoDbRateLimitStore store = DynamoDbRateLimitStore.builder(this.client)
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
		if (this.dynalite != null) {
			this.dynalite.close();
		}
	}

	@Test
	void whileTheServerIsDownEachPolicyFollowsItsFailureModeAndAfterTheRestartTheCountsAreBack() {
		RateLimitPolicy open = policy("open", FailureMode.ALLOW);
		RateLimitPolicy closed = policy("closed", FailureMode.DENY);
		RateLimitPolicy local = policy("local", FailureMode.LOCAL);
		for (RateLimitPolicy policy : new RateLimitPolicy[] { open, closed, local }) {
			assertThat(this.limiter.tryAcquire(policy, "k").origin()).isEqualTo(Decision.Origin.STORE);
			assertThat(this.limiter.tryAcquire(policy, "k").remaining()).isEqualTo(1);
		}
		this.dynalite.kill();
		assertThat(this.limiter.tryAcquire(open, "k").origin()).isEqualTo(Decision.Origin.FAIL_OPEN);
		Decision denied = this.limiter.tryAcquire(closed, "k");
		assertThat(denied.origin()).isEqualTo(Decision.Origin.FAIL_CLOSED);
		assertThat(denied.allowed()).isFalse();
		assertThat(this.limiter.tryAcquire(local, "k").origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
		assertThat(this.limiter.isCircuitOpen(open, "k")).isTrue();

		this.dynalite.restart();
		this.clock.advance(Duration.ofSeconds(6)); // past the open duration: the next request probes the store
		for (RateLimitPolicy policy : new RateLimitPolicy[] { open, closed, local }) {
			Decision last = this.limiter.tryAcquire(policy, "k");
			assertThat(last.origin()).isEqualTo(Decision.Origin.STORE);
			assertThat(last.remaining()).as("%s: the two counted before the kill are still there", policy.name())
				.isZero();
			assertThat(this.limiter.tryAcquire(policy, "k").allowed()).isFalse();
		}
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
