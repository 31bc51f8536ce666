package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.test.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The {@code ratelimit.decision} observation and the meters, through the auto-configuration, with the registries an
 * application (a {@code TestObservationRegistry}) or Spring Boot (its simple meter registry) defines.
 */
class RateLimitObservationTests {

	@Test
	void everyDecisionIsObservedWithPolicyOutcomeAndStoreButNeverTheKey() {
		WebTestSupport.webApplication()
			.withUserConfiguration(ObservedController.class)
			.withBean(TestObservationRegistry.class, TestObservationRegistry::create)
			.run((context) -> {
				MockMvc mvc = WebTestSupport.mockMvc(context);
				mvc.perform(get("/observed"));
				mvc.perform(get("/observed"));
				TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
				TestObservationRegistryAssert.assertThat(registry)
					.hasNumberOfObservationsWithNameEqualTo("ratelimit.decision", 2)
					.hasAnObservation((observation) -> observation.hasNameEqualTo("ratelimit.decision")
						.hasContextualNameEqualTo("ratelimit observed")
						.hasLowCardinalityKeyValue("policy", "observed")
						.hasLowCardinalityKeyValue("store", "memory")
						.hasLowCardinalityKeyValue("outcome", "allowed"))
					.hasAnObservation((observation) -> observation.hasLowCardinalityKeyValue("outcome", "rejected")
						.hasOnlyKeys("policy", "store", "outcome"));
			});
	}

	@Test
	void whereTracingIsOnEveryDecisionIsASpanNamedAfterItsPolicy() {
		SimpleTracer tracer = new SimpleTracer();
		WebTestSupport.webApplication()
			.withConfiguration(AutoConfigurations
				.of(org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration.class))
			.withUserConfiguration(ObservedController.class)
			.withBean(DefaultTracingObservationHandler.class, () -> new DefaultTracingObservationHandler(tracer))
			.run((context) -> {
				MockMvc mvc = WebTestSupport.mockMvc(context);
				mvc.perform(get("/observed"));
				mvc.perform(get("/observed"));
				assertThat(tracer.getSpans()).hasSize(2).allSatisfy((span) -> {
					assertThat(span.getName()).isEqualTo("ratelimit observed");
					assertThat(span.getTags()).containsEntry("policy", "observed").containsEntry("store", "memory")
						.doesNotContainKey("key");
					assertThat(span.getEndTimestamp()).isAfterOrEqualTo(span.getStartTimestamp());
				});
				assertThat(tracer.getSpans()).extracting((span) -> span.getTags().get("outcome"))
					.containsExactly("allowed", "rejected");
			});
	}

	@Test
	void theDecisionTimerIsRecordedOncePerDecisionWithoutALongTaskTimerWhileBootTimesTheRest() {
		WebTestSupport.webApplication()
			.withConfiguration(AutoConfigurations.of(RateLimitMetricsAutoConfiguration.class,
					org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration.class,
					org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class,
					org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration.class,
					org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration.class))
			.withUserConfiguration(ObservedController.class)
			.withPropertyValues("management.observations.key-values.region=eu")
			.run((context) -> {
				assertThat(context).hasSingleBean(io.github.ratelimit.observation.RateLimitMeterObservationHandler.class);
				MockMvc mvc = WebTestSupport.mockMvc(context);
				for (int i = 0; i < 3; i++) {
					mvc.perform(get("/observed"));
				}
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				// One timer per outcome (two admitted, then the limit), each decision counted once.
				// Tagged also with the key values common to every observation.
				assertThat(meters.get("ratelimit.decision").tag("policy", "observed").tag("error", "none")
					.tag("region", "eu").timers())
					.extracting(io.micrometer.core.instrument.Timer::count)
					.containsExactlyInAnyOrder(2L, 1L);
				assertThat(meters.find("ratelimit.decision.active").longTaskTimer()).isNull();
				// Another observation is still timed by Boot's default handler, long-task timer included.
				io.micrometer.observation.ObservationRegistry observations = context
					.getBean(io.micrometer.observation.ObservationRegistry.class);
				io.micrometer.observation.Observation.createNotStarted("other.work", observations).observe(() -> {
				});
				assertThat(meters.get("other.work").timer().count()).isEqualTo(1);
				assertThat(meters.find("other.work.active").longTaskTimer()).isNotNull();
			});
	}

	@Test
	void aMeterHandlerOfTheApplicationsOwnForTheDecisionReplacesTheStarters() {
		new org.springframework.boot.test.context.runner.ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitMetricsAutoConfiguration.class))
			.withBean(MeterRegistry.class, io.micrometer.core.instrument.simple.SimpleMeterRegistry::new)
			.withBean(RateLimitProperties.class, RateLimitProperties::new)
			.withBean("mine", io.github.ratelimit.observation.RateLimitMeterObservationHandler.class,
					() -> new io.github.ratelimit.observation.RateLimitMeterObservationHandler(
							new io.micrometer.core.instrument.simple.SimpleMeterRegistry()))
			.run((context) -> assertThat(context)
				.getBeanNames(io.github.ratelimit.observation.RateLimitMeterObservationHandler.class)
				.containsExactly("mine"));
	}

	@Test
	void nearLimitAdmissionsAreCountedAndTheStateGaugesAreRegistered() {
		withMeters()
			.withUserConfiguration(ObservedController.class)
			.withPropertyValues("ratelimit.policies.observed.limit=10", "ratelimit.metrics.near-limit-ratio=0.8")
			.run((context) -> {
				MockMvc mvc = WebTestSupport.mockMvc(context);
				for (int i = 0; i < 10; i++) {
					mvc.perform(get("/observed"));
				}
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				// The 8th, 9th and 10th admissions leave at most a fifth of the capacity unused.
				assertThat(meters.get("ratelimit.near.limit").tag("policy", "observed").functionCounter().count()).isEqualTo(3);
				assertThat(meters.get("ratelimit.circuit.open").gauge().value()).isZero();
				assertThat(meters.get("ratelimit.memory.keys").gauge().value()).isEqualTo(1);
			});
	}

	@Test
	void aDeadRedisShowsAsFailOpenDecisionsFailuresByCauseAndAnOpenCircuit() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		// The policy lets requests pass when its store fails.
		onDeadRedis(observations, ObservedController.class)
			.withPropertyValues("ratelimit.circuit-breaker.failure-threshold=2", "ratelimit.circuit-breaker.open-duration=1h")
			.run((context) -> {
				MockMvc mvc = WebTestSupport.mockMvc(context);
				for (int i = 0; i < 3; i++) {
					mvc.perform(get("/observed"));
				}
				TestObservationRegistryAssert.assertThat(observations)
					.hasAnObservation((observation) -> observation.hasLowCardinalityKeyValue("outcome", "fail-open")
						.hasLowCardinalityKeyValue("store", "redis"));
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				// Two calls that failed (tagged with the root cause's class: a refused connection, or a timeout when
				// connecting is slow), then one the open circuit spared.
				var failures = meters.get("ratelimit.store.failures").tag("policy", "observed").counters();
				assertThat(failures).extracting((counter) -> counter.getId().getTag("cause") + "=" + (long) counter.count())
					.contains("circuit-open=1");
				assertThat(failures.stream()
					.filter((counter) -> !"circuit-open".equals(counter.getId().getTag("cause")))
					.mapToLong((counter) -> (long) counter.count())
					.sum()).isEqualTo(2);
				assertThat(meters.get("ratelimit.circuit.open").gauge().value()).isEqualTo(1);
			});
	}

	@Test
	void aDeadRedisShowsAsFallbackOrFailClosedDecisionsAsEachPolicysFailureModeSays() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		onDeadRedis(observations, FailureModesController.class)
			.withPropertyValues("ratelimit.policies.local.failure-mode=local", "ratelimit.policies.deny.failure-mode=deny")
			.run((context) -> {
				MockMvc mvc = WebTestSupport.mockMvc(context);
				mvc.perform(get("/local")).andExpect(status().isOk());
				mvc.perform(get("/local")).andExpect(status().isTooManyRequests());
				mvc.perform(get("/deny")).andExpect(status().isServiceUnavailable())
					.andExpect(header().exists("Retry-After"));
				TestObservationRegistryAssert.assertThat(observations)
					.hasAnObservation((observation) -> observation.hasLowCardinalityKeyValue("policy", "local")
						.hasLowCardinalityKeyValue("outcome", "fallback"))
					.hasAnObservation((observation) -> observation.hasLowCardinalityKeyValue("policy", "deny")
						.hasLowCardinalityKeyValue("outcome", "fail-closed"));
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				assertThat(meters.get("ratelimit.decisions").tag("policy", "local")
					.tag("outcome", "local_fallback_allowed").functionCounter().count()).isEqualTo(1);
				assertThat(meters.get("ratelimit.decisions").tag("policy", "local")
					.tag("outcome", "local_fallback_rejected").functionCounter().count()).isEqualTo(1);
				assertThat(meters.get("ratelimit.decisions").tag("policy", "deny").tag("outcome", "fail_closed")
					.functionCounter().count()).isEqualTo(1);
			});
	}

	@Test
	void aPolicyTheStoreWasNotAskedAboutIsObservedAsNotDecidedRatherThanAsAnError() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		try (RedisServer redis = RedisServer.start()) {
			WebTestSupport.webApplication()
				.withConfiguration(AutoConfigurations.of(
						org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration.class))
				.withUserConfiguration(TwoPoliciesController.class)
				.withBean(TestObservationRegistry.class, () -> observations)
				.withPropertyValues("ratelimit.store=redis", "spring.data.redis.url=" + redis.url(),
						"ratelimit.redis.key-prefix=rl-observed-" + System.nanoTime())
				.run((context) -> {
					MockMvc mvc = WebTestSupport.mockMvc(context);
					// Admitted; rejected by the store (which the deny cache remembers); rejected by the deny cache
					// alone, so the store is not asked about the other policy.
					for (int i = 0; i < 3; i++) {
						mvc.perform(get("/two"));
					}
					TestObservationRegistryAssert.assertThat(observations)
						.hasNumberOfObservationsWithNameEqualTo("ratelimit.decision", 6)
						.hasAnObservation((observation) -> observation.hasLowCardinalityKeyValue("policy", "loose")
							.hasLowCardinalityKeyValue("outcome", "not-decided"))
						.hasHandledContextsThatSatisfy((handled) -> assertThat(handled)
							.extracting((handledContext) -> handledContext.getLowCardinalityKeyValue("outcome"))
							.extracting((outcome) -> (outcome != null) ? outcome.getValue() : null)
							.containsOnly("allowed", "rejected", "not-decided"));
				});
		}
	}

	@Test
	void whatARemoteStoreDoesWhileDecidingRunsInTheDecisionsScope() {
		TestObservationRegistry observations = TestObservationRegistry.create();
		java.util.List<String> current = new java.util.concurrent.CopyOnWriteArrayList<>();
		io.github.ratelimit.RateLimitListener listener = new io.github.ratelimit.RateLimitListener() {
			@Override
			public void onDecision(io.github.ratelimit.RateLimitPolicy policy, io.github.ratelimit.Decision decision) {
				io.micrometer.observation.Observation observation = observations.getCurrentObservation();
				current.add((observation != null) ? String.valueOf(observation.getContext().getName()) : "none");
			}
		};
		try (RedisServer redis = RedisServer.start()) {
			WebTestSupport.webApplication()
				.withConfiguration(AutoConfigurations.of(
						org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration.class))
				.withUserConfiguration(ObservedController.class, TwoPoliciesController.class)
				.withBean(TestObservationRegistry.class, () -> observations)
				.withBean(io.github.ratelimit.RateLimitListener.class, () -> listener)
				.withPropertyValues("ratelimit.store=redis", "spring.data.redis.url=" + redis.url(),
						"ratelimit.redis.key-prefix=rl-scoped-" + System.nanoTime())
				.run((context) -> {
					MockMvc mvc = WebTestSupport.mockMvc(context);
					mvc.perform(get("/observed"));
					mvc.perform(get("/two"));
					assertThat(current).containsExactly("ratelimit.decision", "ratelimit.decision", "ratelimit.decision");
				});
		}
	}

	@Test
	void aNearLimitRatioOutsideZeroToOneFailsStartUpNamingTheProperty() {
		WebTestSupport.webApplication()
			.withPropertyValues("ratelimit.metrics.near-limit-ratio=1.5")
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("ratelimit.metrics.near-limit-ratio"));
	}

	/** The web application with Boot's metrics auto-configured, as an application with Actuator has them. */
	private static WebApplicationContextRunner withMeters() {
		return WebTestSupport.webApplication()
			.withConfiguration(AutoConfigurations.of(RateLimitMetricsAutoConfiguration.class,
					org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class,
					org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration.class,
					org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration.class));
	}

	/** With meters, on a Redis store at port 1 of 127.0.0.1, where nothing listens: every decision fails. */
	private static WebApplicationContextRunner onDeadRedis(TestObservationRegistry observations, Class<?> controller) {
		return withMeters()
			.withConfiguration(AutoConfigurations
				.of(org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration.class))
			.withUserConfiguration(controller)
			.withBean(TestObservationRegistry.class, () -> observations)
			.withPropertyValues("ratelimit.store=redis", "spring.data.redis.host=127.0.0.1", "spring.data.redis.port=1",
					"ratelimit.redis.timeout=500ms");
	}

	@RestController
	static class TwoPoliciesController {

		@RateLimited(name = "tight", limit = 1, window = "1m")
		@RateLimited(name = "loose", limit = 100, window = "1m")
		@GetMapping("/two")
		String two() {
			return "ok";
		}

	}

	@RestController
	static class FailureModesController {

		@RateLimited(name = "local", limit = 1, window = "1h")
		@GetMapping("/local")
		String local() {
			return "ok";
		}

		@RateLimited(name = "deny", limit = 1, window = "1h")
		@GetMapping("/deny")
		String deny() {
			return "ok";
		}

	}

	@RestController
	static class ObservedController {

		@RateLimited(name = "observed", limit = 1, window = "1m")
		@GetMapping("/observed")
		String observed() {
			return "ok";
		}

	}

}
