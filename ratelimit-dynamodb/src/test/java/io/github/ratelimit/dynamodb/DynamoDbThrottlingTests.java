package io.github.ratelimit.dynamodb;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.limiter.Admission;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.test.Dynalite;
import io.github.ratelimit.test.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * DynamoDB throttling ({@code ProvisionedThroughputExceededException}, as a hot key over its partition's capacity gets
 * it), answered by a proxy in front of dynalite: the decision fails into the policy's failure mode, and the circuit
 * opens for the throttled key's group of keys only.
 */
class DynamoDbThrottlingTests {

	private static final String THROTTLED = "HTTP/1.1 400 Bad Request\r\n"
			+ "Content-Type: application/x-amz-json-1.0\r\n"
			+ "x-amzn-RequestId: THROTTLED\r\n"
			+ "Content-Length: 128\r\n\r\n"
			+ String.format("%-128s", "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException\","
					+ "\"message\":\"Rate of requests exceeds\"}");

	private final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:10Z");

	private Dynalite dynalite;

	private TcpProxy proxy;

	private DynamoDbClient client;

	private DynamoDbRateLimitStore store;

	@BeforeEach
	void start() {
		assumeTrue(Dynalite.isAvailable(), "node is not installed");
		this.dynalite = Dynalite.start();
		this.proxy = TcpProxy.to("127.0.0.1", this.dynalite.port());
		this.client = DynamoDbClients.client(URI.create("http://127.0.0.1:" + this.proxy.port()));
		this.store = DynamoDbRateLimitStore.builder(this.client)
			.table(DynamoDbClients.newTable())
			.createTable(true)
			.clock(this.clock)
			.timeout(Duration.ofSeconds(2))
			.build();
		this.store.start();
	}

	@AfterEach
	void stop() {
		if (this.client != null) {
			this.client.close();
			this.proxy.close();
		}
		if (this.dynalite != null) {
			this.dynalite.close();
		}
	}

	@Test
	void aThrottledDecisionFailsNamingTheCause() {
		this.proxy.answerEveryRequestWith(THROTTLED);
		assertThatThrownBy(() -> this.store.tryAcquire(policy(FailureMode.ALLOW), "hot", 1))
			.isInstanceOf(RateLimitStoreException.class)
			.hasMessageContaining("DynamoDB throttled the decision");
	}

	@Test
	void throttlingOpensTheCircuitOfTheHotKeysGroupOnly() {
		RateLimiter limiter = RateLimiter.builder(this.store)
			.clock(this.clock)
			.failureThreshold(3)
			.openDuration(Duration.ofSeconds(30))
			.build();
		RateLimitPolicy policy = policy(FailureMode.DENY);
		String hot = "hot";
		String other = keyInAnotherGroup(policy, hot);
		this.proxy.answerEveryRequestWith(THROTTLED);
		for (int i = 0; i < 3; i++) {
			Decision decision = limiter.tryAcquire(policy, hot);
			assertThat(decision.origin()).isEqualTo(Decision.Origin.FAIL_CLOSED);
			assertThat(decision.allowed()).isFalse();
		}
		assertThat(limiter.isCircuitOpen(policy, hot)).isTrue();
		this.proxy.answerEveryRequestWith(null);
		assertThat(limiter.isCircuitOpen(policy, other)).isFalse();
		Decision decided = limiter.tryAcquire(policy, other);
		assertThat(decided.origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(decided.allowed()).isTrue();
		assertThat(limiter.tryAcquire(policy, hot).origin()).as("its circuit is still open")
			.isEqualTo(Decision.Origin.FAIL_CLOSED);
	}

	@Test
	void aThrottledSharedQuotaSendsOnlyItselfToItsFailureMode() {
		// The security review's case: each request draws a per-address limit and one shared item, which throttles.
		RateLimiter limiter = RateLimiter.builder(this.store).clock(this.clock).failureThreshold(1_000).build();
		RateLimitPolicy perAddress = policy(FailureMode.ALLOW);
		RateLimitPolicy account = RateLimitPolicy.builder("account")
			.algorithm(Algorithm.TOKEN_BUCKET)
			.limit(10_000)
			.window(Duration.ofSeconds(1))
			.failureMode(FailureMode.ALLOW)
			.build();
		this.proxy.answerRequestsContaining("account:application", THROTTLED); // the shared item's key
		int admitted = 0;
		for (int i = 0; i < 30; i++) {
			Admission admission = limiter.tryAcquireAll(List.of(new Acquisition(perAddress, "203.0.113.7", 1),
					new Acquisition(account, "application", 1)));
			if (admission.allowed()) {
				admitted++;
				assertThat(admission.decision(1).origin()).isEqualTo(Decision.Origin.FAIL_OPEN);
			}
		}
		assertThat(admitted).as("the per-address limit still holds").isEqualTo(10);
	}

	private String keyInAnotherGroup(RateLimitPolicy policy, String key) {
		for (int i = 0;; i++) {
			if (!this.store.partitionOf(policy, "other-" + i).equals(this.store.partitionOf(policy, key))) {
				return "other-" + i;
			}
		}
	}

	private static RateLimitPolicy policy(FailureMode failureMode) {
		return RateLimitPolicy.builder("throttled")
			.algorithm(Algorithm.FIXED)
			.limit(10)
			.window(Duration.ofMinutes(1))
			.failureMode(failureMode)
			.build();
	}

}
