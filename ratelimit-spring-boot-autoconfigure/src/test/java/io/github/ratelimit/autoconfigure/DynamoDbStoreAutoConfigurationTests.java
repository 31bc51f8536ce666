package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.dynamodb.DynamoDbClients;
import io.github.ratelimit.dynamodb.DynamoDbRateLimitStore;
import io.github.ratelimit.integration.HotController;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.test.Dynalite;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The DynamoDB store's auto-configuration: when it applies, what it builds, what it backs off for, how it fails.
 */
class DynamoDbStoreAutoConfigurationTests {

	private static Dynalite dynalite;

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
		.withSystemProperties("aws.accessKeyId=test", "aws.secretAccessKey=test");

	@BeforeAll
	static void startDynalite() {
		assumeTrue(Dynalite.isAvailable(), "node is not installed");
		dynalite = Dynalite.start();
	}

	@AfterAll
	static void stopDynalite() {
		if (dynalite != null) {
			dynalite.close();
		}
	}

	@Test
	void storeDynamodbBuildsAClientFromTheSettingsAndTheStoreOnIt() {
		String table = DynamoDbClients.newTable();
		this.runner.withPropertyValues(local(table))
			.withPropertyValues("ratelimit.dynamodb.key-prefix=app1", "ratelimit.dynamodb.timeout=2s")
			.run((context) -> {
				assertThat(context).hasSingleBean(DynamoDbRateLimitStore.class)
					.hasSingleBean(DynamoDbClient.class)
					.doesNotHaveBean(InMemoryRateLimitStore.class);
				DynamoDbClient client = context.getBean(DynamoDbClient.class);
				assertThat(client.serviceClientConfiguration().endpointOverride()).contains(dynalite.endpoint());
				assertThat(client.listTables().tableNames()).contains(table);
				assertThat(context.getBean(RateLimitProperties.class).getDynamodb().getTimeout())
					.isEqualTo(Duration.ofSeconds(2));
			});
	}

	@Test
	void aReactiveApplicationDecidesOnTheAsynchronousClientAndAServletOneHasNone() {
		String table = DynamoDbClients.newTable();
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withSystemProperties("aws.accessKeyId=test", "aws.secretAccessKey=test")
			.withPropertyValues(local(table))
			.run((context) -> {
				DynamoDbAsyncClient asyncClient = context.getBean(DynamoDbAsyncClient.class);
				assertThat(asyncClient.serviceClientConfiguration().endpointOverride()).contains(dynalite.endpoint());
				RateLimitPolicy policy = RateLimitPolicy.builder("p").limit(1).window(Duration.ofMinutes(1)).build();
				Reservation first = context.getBean(DynamoDbRateLimitStore.class)
					.tryAcquireAllAsync(List.of(new Acquisition(policy, "k", 1)))
					.toCompletableFuture()
					.get(10, TimeUnit.SECONDS);
				assertThat(first.decisions().get(0).allowed()).isTrue();
				assertThat(context.getBean(DynamoDbRateLimitStore.class).tryAcquire(policy, "k", 1).allowed())
					.as("the same item, whichever client wrote it").isFalse();
			});
		this.runner.withPropertyValues(local(DynamoDbClients.newTable()))
			.run((context) -> assertThat(context).doesNotHaveBean(DynamoDbAsyncClient.class));
	}

	@Test
	void withTheApplicationsOwnClientNoAsynchronousClientIsBuiltBesideIt() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withSystemProperties("aws.accessKeyId=test", "aws.secretAccessKey=test")
			.withUserConfiguration(OwnClient.class)
			.withPropertyValues("ratelimit.store=dynamodb", "ratelimit.dynamodb.create-table=true",
					"ratelimit.dynamodb.table=" + DynamoDbClients.newTable())
			.run((context) -> assertThat(context).hasSingleBean(DynamoDbRateLimitStore.class)
				.doesNotHaveBean(DynamoDbAsyncClient.class));
	}

	@Test
	void theApplicationsOwnDynamoDbClientIsUsed() {
		this.runner.withUserConfiguration(OwnClient.class)
			.withPropertyValues("ratelimit.store=dynamodb", "ratelimit.dynamodb.create-table=true",
					"ratelimit.dynamodb.table=" + DynamoDbClients.newTable())
			.run((context) -> assertThat(context).hasSingleBean(DynamoDbRateLimitStore.class)
				.getBean(DynamoDbClient.class)
				.isSameAs(context.getBean(OwnClient.class).client));
	}

	@Test
	void withoutStoreDynamodbTheDynamoDbStoreIsNotUsedEvenWhenItIsOnTheClasspath() {
		this.runner.withPropertyValues("ratelimit.dynamodb.endpoint=" + dynalite.endpoint())
			.run((context) -> assertThat(context).hasSingleBean(InMemoryRateLimitStore.class)
				.doesNotHaveBean(DynamoDbRateLimitStore.class)
				.doesNotHaveBean(DynamoDbClient.class));
	}

	@Test
	void storeDynamodbWithoutTheSdkFailsToStartNamingTheDependency() {
		this.runner.withClassLoader(new FilteredClassLoader(DynamoDbClient.class))
			.withPropertyValues("ratelimit.store=dynamodb")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessage("ratelimit.store is 'dynamodb' but software.amazon.awssdk:dynamodb is not on the classpath"));
	}

	@Test
	void storeDynamodbWithoutTheStoreModuleFailsToStartNamingTheModule() {
		this.runner.withClassLoader(new FilteredClassLoader(DynamoDbRateLimitStore.class))
			.withPropertyValues("ratelimit.store=dynamodb")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessage("ratelimit.store is 'dynamodb' but io.github.ratelimit:ratelimit-dynamodb is not on the "
						+ "classpath"));
	}

	@Test
	void aMissingTableFailsStartUpNamingTheTableAndTheSetting() {
		this.runner
			.withPropertyValues("ratelimit.store=dynamodb", "ratelimit.dynamodb.region=us-east-1",
					"ratelimit.dynamodb.endpoint=" + dynalite.endpoint(), "ratelimit.dynamodb.table=missing-table")
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("DynamoDB table 'missing-table' does not exist")
				.hasStackTraceContaining("ratelimit.dynamodb.create-table=true"));
	}

	@Test
	void aSharedQuotaOfOneKeyForMoreThanOneItemTakesFailsStartUpWithAdvice() {
		this.runner.withPropertyValues(local(DynamoDbClients.newTable()))
			.withPropertyValues("ratelimit.policies.account.algorithm=token-bucket",
					"ratelimit.policies.account.limit=10000", "ratelimit.policies.account.window=1s",
					"ratelimit.policies.account.key='application'", "ratelimit.filters.edge.paths=/**",
					"ratelimit.filters.edge.limit=100", "ratelimit.filters.edge.window=1s",
					"ratelimit.filters.edge.policies=account")
			.run((context) -> assertThat(context).getFailure()
								.hasStackTraceContaining("ratelimit.policies.account: ")
				.hasStackTraceContaining("10000 a second for a key shared by every request")
				.hasStackTraceContaining("one item takes about 1,000 writes a second")
				.hasStackTraceContaining("ratelimit.policies.account.limit"));
	}

	@Test
	void aSharedQuotaOnAnAnnotationOrRaisedByAPlanOverWhatOneItemTakesFailsStartUpToo() {
		this.runner.withPropertyValues(local(DynamoDbClients.newTable()))
			.withUserConfiguration(ApplicationWideQuota.class)
			.run((context) -> assertThat(context).getFailure()
								.hasStackTraceContaining("@RateLimited on Quoted#call(): ")
				.hasStackTraceContaining("2000 a second for a key shared by every request"));
		this.runner.withPropertyValues(local(DynamoDbClients.newTable()))
			.withPropertyValues("ratelimit.policies.account.limit=1000", "ratelimit.policies.account.window=1s",
					"ratelimit.policies.account.key='application'", "ratelimit.filters.edge.paths=/**",
					"ratelimit.filters.edge.limit=100", "ratelimit.filters.edge.window=1s",
					"ratelimit.filters.edge.policies=account", "ratelimit.plans.gold.account.limit=5000")
			.run((context) -> assertThat(context).getFailure()
								.hasStackTraceContaining("5000 a second for a key shared by every request")
				.hasStackTraceContaining("under plan 'gold'"));
	}

	@Configuration(proxyBeanMethods = false)
	static class ApplicationWideQuota {

		@Bean
		Quoted quoted() {
			return new Quoted();
		}

	}

	static class Quoted {

		@RateLimited(name = "everyone", limit = 2000, window = "1s", key = "'all'")
		public String call() {
			return "ok";
		}

	}

	@Test
	void sharedQuotasThatOneItemTakesOrWithAKeyPerClientStart() {
		this.runner.withPropertyValues(local(DynamoDbClients.newTable()))
			.withPropertyValues("ratelimit.policies.account.limit=1000", "ratelimit.policies.account.window=1s",
					"ratelimit.policies.account.key='application'",
					"ratelimit.policies.tenants.limit=100000", "ratelimit.policies.tenants.window=1s",
					"ratelimit.policies.tenants.key=#request.getHeader('X-Tenant')", "ratelimit.filters.edge.paths=/**",
					"ratelimit.filters.edge.limit=100", "ratelimit.filters.edge.window=1s",
					"ratelimit.filters.edge.policies=account,tenants")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aSlidingLogPolicyFailsStartUpNamingTheStoreAndTheAlternative() {
		this.runner.withUserConfiguration(HotController.class)
			.withPropertyValues(local(DynamoDbClients.newTable()))
			.withPropertyValues("ratelimit.policies.hot.algorithm=sliding-log")
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining(InvalidRateLimitPolicyException.class.getName()
						+ ": @RateLimited on HotController#hit(String): 'algorithm' SLIDING_LOG is not supported by "
						+ "the DynamoDB store")
				.hasStackTraceContaining("use SLIDING_COUNTER"));
	}

	@Test
	void anEndpointThatIsNotAnHttpUrlFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.store=dynamodb", "ratelimit.dynamodb.endpoint=localhost:8000")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("ratelimit.dynamodb.endpoint"));
	}

	private static String[] local(String table) {
		return new String[] { "ratelimit.store=dynamodb", "ratelimit.dynamodb.region=us-east-1",
				"ratelimit.dynamodb.endpoint=" + dynalite.endpoint(), "ratelimit.dynamodb.table=" + table,
				"ratelimit.dynamodb.create-table=true" };
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnClient {

		final DynamoDbClient client = DynamoDbClients.client(dynalite.endpoint());

		@Bean
		DynamoDbClient applicationDynamoDbClient() {
			return this.client;
		}

	}


}
