package io.github.ratelimit.autoconfigure;

import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.PolicyMode;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.web.RateLimitPlanResolver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Plans chosen per request by a {@link RateLimitPlanResolver}, and shadow policies, through the auto-configuration.
 */
class PlansAndShadowIntegrationTests {

	private final WebApplicationContextRunner runner = WebTestSupport.webApplication()
		.withUserConfiguration(Controllers.class)
		.withPropertyValues("ratelimit.plans.pro.planned.limit=5", "ratelimit.plans.free.planned.limit=2",
				"ratelimit.default-plan=free");

	@Test
	void aClientWhosePlanChangesGetsTheNewPlansLimitOnItsNextRequest() {
		AtomicReference<String> plan = new AtomicReference<>("free");
		this.runner.withBean(RateLimitPlanResolver.class, () -> (request) -> plan.get()).run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/planned")).andExpect(status().isOk()).andExpect(header().string("RateLimit-Limit", "2"));
			mvc.perform(get("/planned")).andExpect(status().isOk());
			mvc.perform(get("/planned")).andExpect(status().isTooManyRequests());
			plan.set("pro");
			// The pro variant counts apart: its 5 are all there.
			for (int i = 0; i < 5; i++) {
				mvc.perform(get("/planned")).andExpect(status().isOk())
					.andExpect(header().string("RateLimit-Limit", "5"));
			}
			mvc.perform(get("/planned")).andExpect(status().isTooManyRequests());
		});
	}

	@Test
	void anUnknownPlanOrNoPlanIsTheDefaultPlan() {
		AtomicReference<String> plan = new AtomicReference<>("platinum");
		this.runner.withBean(RateLimitPlanResolver.class, () -> (request) -> plan.get()).run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/planned")).andExpect(header().string("RateLimit-Limit", "2"));
			plan.set(null);
			mvc.perform(get("/planned")).andExpect(status().isOk()).andExpect(header().string("RateLimit-Limit", "2"));
			mvc.perform(get("/planned")).andExpect(status().isTooManyRequests());
		});
	}

	@Test
	void aShadowPolicyReportsWhatItWouldHaveRejectedApartFromRejectionsAndSendsNoHeaders() {
		ShadowListener listener = new ShadowListener();
		TestObservationRegistry observations = TestObservationRegistry.create();
		this.runner.withBean(ShadowListener.class, () -> listener)
			.withBean(TestObservationRegistry.class, () -> observations)
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withConfiguration(org.springframework.boot.autoconfigure.AutoConfigurations
				.of(RateLimitMetricsAutoConfiguration.class))
			.run((context) -> {
				MockMvc mvc = WebTestSupport.mockMvc(context);
				for (int i = 0; i < 4; i++) {
					mvc.perform(get("/shadow")).andExpect(status().isOk())
						.andExpect(header().doesNotExist("RateLimit-Limit"));
				}
				assertThat(listener.rejections).hasValue(3);
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				assertThat(meters.get("ratelimit.shadow.rejections").tag("policy", "shadowed").counter().count())
					.isEqualTo(3);
				// Counted as decisions of their own: a PromQL sum of rejections must not count requests that passed.
				assertThat(meters.get("ratelimit.decisions").tag("policy", "shadowed").tag("outcome", "shadow_rejected")
					.functionCounter().count()).isEqualTo(3);
				assertThat(meters.get("ratelimit.decisions").tag("policy", "shadowed").tag("outcome", "allowed")
					.functionCounter().count()).isEqualTo(1);
				assertThat(meters.find("ratelimit.decisions").tag("outcome", "rejected").functionCounter()).isNull();
				TestObservationRegistryAssert.assertThat(observations)
					.hasAnObservation((observation) -> observation.hasLowCardinalityKeyValue("outcome", "shadow-rejected")
						.hasLowCardinalityKeyValue("policy", "shadowed"));
			});
	}

	static class ShadowListener implements RateLimitListener {

		final java.util.concurrent.atomic.AtomicInteger rejections = new java.util.concurrent.atomic.AtomicInteger();

		@Override
		public void onShadowRejection(RateLimitPolicy policy, Decision decision) {
			this.rejections.incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Controllers {

		@Bean
		PlannedController plannedController() {
			return new PlannedController();
		}

	}

	@RestController
	static class PlannedController {

		@RateLimited(name = "planned", limit = 1, window = "1h", algorithm = Algorithm.SLIDING_LOG)
		@GetMapping("/planned")
		String planned() {
			return "ok";
		}

		@RateLimited(name = "shadowed", limit = 1, window = "1h", mode = PolicyMode.SHADOW)
		@GetMapping("/shadow")
		String shadow() {
			return "ok";
		}

	}

}
