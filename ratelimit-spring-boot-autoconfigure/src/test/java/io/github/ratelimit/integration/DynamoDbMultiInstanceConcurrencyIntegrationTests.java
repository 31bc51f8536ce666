package io.github.ratelimit.integration;

import java.util.List;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.dynamodb.DynamoDbClients;
import io.github.ratelimit.dynamodb.DynamoDbRateLimitStore;
import io.github.ratelimit.test.Dynalite;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Two application contexts (two instances of one application) on one DynamoDB table (dynalite), 32 threads each on
 * one key: exactly the limit is admitted, for every algorithm the DynamoDB store supports.
 */
class DynamoDbMultiInstanceConcurrencyIntegrationTests {

	private static Dynalite dynalite;

	@BeforeAll
	static void startDynalite() {
		assumeTrue(Dynalite.isAvailable(), "node is not installed");
		dynalite = Dynalite.start();
		System.setProperty("aws.accessKeyId", "test");
		System.setProperty("aws.secretAccessKey", "test");
	}

	@AfterAll
	static void stopDynalite() {
		if (dynalite != null) {
			dynalite.close();
		}
		System.clearProperty("aws.accessKeyId");
		System.clearProperty("aws.secretAccessKey");
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "SLIDING_LOG", "CONCURRENCY" }, mode = EnumSource.Mode.EXCLUDE)
	void twoInstancesOnOneTableAdmitExactlyTheLimit(Algorithm algorithm) {
		WebApplicationContextRunner instance = Instances.application()
			.withPropertyValues("ratelimit.store=dynamodb", "ratelimit.dynamodb.endpoint=" + dynalite.endpoint(),
					"ratelimit.dynamodb.region=us-east-1", "ratelimit.dynamodb.table=" + DynamoDbClients.newTable(),
					"ratelimit.dynamodb.create-table=true", "ratelimit.policies.hot.algorithm=" + algorithm,
					// Generous for slow CI machines, and fail closed: a timeout must never look like an admission.
					"ratelimit.dynamodb.timeout=20s", "ratelimit.failure-mode=deny");
		instance.run((first) -> instance.run((second) -> {
			assertThat(first.getBean(DynamoDbRateLimitStore.class))
				.isNotSameAs(second.getBean(DynamoDbRateLimitStore.class));
			Instances.Result result = Instances.hammer(List.of(first, second), 32, 10, "user-1");
			assertThat(result.admitted()).as(algorithm.name()).isEqualTo(100);
			assertThat(result.rejected()).as(algorithm.name()).isEqualTo(540);
		}));
	}

}
