package io.github.ratelimit.autoconfigure;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.engine.RateLimitTenants;
import io.github.ratelimit.engine.TenantLimits;
import io.github.ratelimit.engine.TenantLimitsSource;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.cache.caffeine.CaffeineCache;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Limits per tenant from the application's {@link TenantLimitsSource}, through the auto-configuration: each tenant's
 * own limit, counted apart; a change applied on the next request once evicted, with the count carried over; a lookup
 * that fails or hangs answered by the policy's failure mode, never by a 500 or a wait past the timeout.
 */
class TenantLimitsIntegrationTests {

	private final Map<String, Long> limits = new ConcurrentHashMap<>(Map.of("acme", 3L, "globex", 6L));

	private final AtomicInteger lookups = new AtomicInteger();

	private final WebApplicationContextRunner runner = WebTestSupport.webApplication()
		.withUserConfiguration(Controllers.class)
		.withBean(TenantLimitsSource.class, () -> (policy, tenant) -> {
			this.lookups.incrementAndGet();
			Long limit = this.limits.get(tenant);
			return (limit != null) ? TenantLimits.ofLimit(limit) : null;
		});

	@Test
	void eachTenantGetsItsOwnLimitCountedApartAndUnknownTenantsThePolicysOwn() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			assertAdmitsThenRejects(mvc, "acme", 3);
			assertAdmitsThenRejects(mvc, "globex", 6);
			assertAdmitsThenRejects(mvc, "initech", 2);
			assertThat(this.lookups).as("one lookup per tenant, then the cache").hasValue(3);
		});
	}

	@Test
	void tenantsWithLimitsOfTheirOwnNeverShareACounterEvenUnderOneKey() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			for (int i = 0; i < 3; i++) {
				mvc.perform(get("/tenants/acme/shared")).andExpect(status().isOk());
			}
			mvc.perform(get("/tenants/acme/shared")).andExpect(status().isTooManyRequests());
			for (int i = 0; i < 6; i++) {
				mvc.perform(get("/tenants/globex/shared")).andExpect(status().isOk());
			}
			mvc.perform(get("/tenants/globex/shared")).andExpect(status().isTooManyRequests());
		});
	}

	@Test
	void aChangedLimitAppliesOnTheTenantsNextRequestOnceEvictedWithItsCountCarriedOver() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			assertAdmitsThenRejects(mvc, "acme", 3);
			this.limits.put("acme", 5L);
			mvc.perform(get("/tenants/acme/reports")).andExpect(status().isTooManyRequests());
			context.getBean(RateLimitTenants.class).evict("acme");
			for (int i = 0; i < 2; i++) {
				mvc.perform(get("/tenants/acme/reports")).andExpect(status().isOk())
					.andExpect(header().string("RateLimit-Limit", "5"));
			}
			mvc.perform(get("/tenants/acme/reports")).andExpect(status().isTooManyRequests());
		});
	}

	@Test
	void aFailingLookupFollowsTheFailureModeAndIsAskedAgainLater() {
		AtomicInteger calls = new AtomicInteger();
		TenantLimitsSource failing = (policy, tenant) -> {
			if (calls.incrementAndGet() <= 1) {
				throw new IllegalStateException("database down");
			}
			return TenantLimits.ofLimit(1);
		};
		WebTestSupport.webApplication().withUserConfiguration(Controllers.class)
			.withBean(TenantLimitsSource.class, () -> failing)
			.withPropertyValues("ratelimit.policies.reports.failure-mode=deny")
			.run((context) -> {
				MockMvc mvc = WebTestSupport.mockMvc(context);
				mvc.perform(get("/tenants/acme/reports")).andExpect(status().isServiceUnavailable())
					.andExpect(header().exists("Retry-After"));
				mvc.perform(get("/tenants/acme/reports")).andExpect(status().isOk())
					.andExpect(header().string("RateLimit-Limit", "1"));
				mvc.perform(get("/tenants/acme/reports")).andExpect(status().isTooManyRequests());
			});
	}

	@Test
	void aLookupThatHangsAnswersByTheFailureModeWithinTheTimeout() throws Exception {
		CountDownLatch release = new CountDownLatch(1);
		TenantLimitsSource hanging = hangingUntil(release, TenantLimits.ofLimit(1));
		try {
			WebTestSupport.webApplication().withUserConfiguration(Controllers.class)
				.withBean(TenantLimitsSource.class, () -> hanging)
				.withPropertyValues("ratelimit.tenants.timeout=100ms", "ratelimit.policies.reports.failure-mode=local")
				.run((context) -> {
					MockMvc mvc = WebTestSupport.mockMvc(context);
					// Answered while the lookup still hangs: under the policy's own limit of 2 (failure mode local).
					for (int i = 0; i < 2; i++) {
						mvc.perform(get("/tenants/acme/reports")).andExpect(status().isOk())
							.andExpect(header().string("RateLimit-Limit", "2"));
					}
					mvc.perform(get("/tenants/acme/reports")).andExpect(status().isTooManyRequests());
					assertThat(release.getCount()).as("the lookup never answered").isOne();
				});
		}
		finally {
			release.countDown();
		}
	}

	@Test
	void aKnownTenantKeepsItsLimitsWhileItsSourceHangs() throws Exception {
		CountDownLatch release = new CountDownLatch(1);
		AtomicInteger calls = new AtomicInteger();
		TenantLimitsSource hangsOnceKnown = (policy, tenant) -> {
			if (calls.incrementAndGet() > 1) {
				hangingUntil(release, null).limitsOf(policy, tenant);
			}
			return TenantLimits.ofLimit(3);
		};
		try {
			WebTestSupport.webApplication().withUserConfiguration(Controllers.class)
				.withBean(TenantLimitsSource.class, () -> hangsOnceKnown)
				// Every answer is old at once: each request would refresh it, and is decided by the last answer.
				.withPropertyValues("ratelimit.tenants.cache.time-to-live=1ms", "ratelimit.tenants.timeout=50ms",
						"ratelimit.policies.reports.failure-mode=deny")
				.run((context) -> {
					MockMvc mvc = WebTestSupport.mockMvc(context);
					mvc.perform(get("/tenants/acme/reports")).andExpect(status().isOk())
						.andExpect(header().string("RateLimit-Limit", "3"));
					// Older than the time to live whatever the machine's speed: the next request refreshes it.
					Thread.sleep(20);
					for (int i = 0; i < 2; i++) {
						mvc.perform(get("/tenants/acme/reports")).andExpect(status().isOk())
							.andExpect(header().string("RateLimit-Limit", "3"));
					}
					mvc.perform(get("/tenants/acme/reports")).andExpect(status().isTooManyRequests());
					// The refresh runs on the tenants' pool: wait for it to reach the source before the pool closes.
					long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
					while (calls.get() < 2 && System.nanoTime() < deadline) {
						Thread.sleep(10);
					}
				});
		}
		finally {
			release.countDown();
		}
		assertThat(calls.get()).as("the source hung, one refresh at a time").isGreaterThan(1);
	}

	@Test
	void invalidLimitsFromTheSourceAreDecidedUnderThePolicysOwnInsteadOfFailingTheRequest() {
		WebTestSupport.webApplication().withUserConfiguration(Controllers.class)
			.withBean(TenantLimitsSource.class, () -> (policy, tenant) -> TenantLimits.ofLimit(0))
			.run((context) -> assertAdmitsThenRejects(WebTestSupport.mockMvc(context), "acme", 2));
	}

	@Test
	void aFloodOfUnknownTenantsNeverPassesUncountedWhileLookupsCannotKeepUp() throws Exception {
		CountDownLatch release = new CountDownLatch(1);
		TenantLimitsSource hanging = hangingUntil(release, null);
		try {
			WebTestSupport.webApplication().withUserConfiguration(Controllers.class)
				.withBean(TenantLimitsSource.class, () -> hanging)
				.withPropertyValues("ratelimit.tenants.timeout=20ms", "ratelimit.tenants.threads=1")
				.run((context) -> {
					MockMvc mvc = WebTestSupport.mockMvc(context);
					// Failure mode allow: each tenant under the policy's own 2 a minute, never unlimited.
					for (int i = 0; i < 2; i++) {
						mvc.perform(get("/tenants/flooded/reports")).andExpect(status().isOk());
					}
					mvc.perform(get("/tenants/flooded/reports")).andExpect(status().isTooManyRequests());
					mvc.perform(get("/tenants/" + "t".repeat(300) + "/reports")).andExpect(status().isOk());
				});
		}
		finally {
			release.countDown();
		}
	}

	@Test
	void aChangedWindowOfThePolicyKeepsEachTenantsVariantAtItsWindow() {
		this.runner.withPropertyValues("management.endpoint.ratelimits.access=unrestricted").run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/tenants/acme/reports")).andExpect(status().isOk());
			context.getBean(io.github.ratelimit.engine.RuntimeChanges.class).change("reports", Map.of("window", "1h"));
			mvc.perform(get("/tenants/acme/reports")).andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Limit", "3"));
		});
	}

	@Test
	void theCacheIsCaffeineWhenPresentElseABoundedMapAndNoSourceMeansNoTenants() {
		this.runner.run((context) -> assertThat(context.getBean(RateLimitTenants.class).cache())
			.isInstanceOf(CaffeineCache.class));
		WebTestSupport.webApplication()
			.withBean(TenantLimitsSource.class, () -> (policy, tenant) -> null)
			.withClassLoader(new FilteredClassLoader("com.github.benmanes.caffeine"))
			.run((context) -> assertThat(context.getBean(RateLimitTenants.class).cache())
				.isNotInstanceOf(CaffeineCache.class));
		WebTestSupport.webApplication()
			.withUserConfiguration(Controllers.class)
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitTenants.class));
	}

	/** A source whose lookups answer only once released (a database that hangs). */
	private static TenantLimitsSource hangingUntil(CountDownLatch release, TenantLimits answer) {
		return (policy, tenant) -> {
			try {
				release.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return answer;
		};
	}

	private static void assertAdmitsThenRejects(MockMvc mvc, String tenant, int limit) throws Exception {
		for (int i = 0; i < limit; i++) {
			mvc.perform(get("/tenants/" + tenant + "/reports")).andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Limit", Integer.toString(limit)));
		}
		mvc.perform(get("/tenants/" + tenant + "/reports")).andExpect(status().isTooManyRequests());
	}

	@Configuration(proxyBeanMethods = false)
	static class Controllers {

		@Bean
		ReportsController reportsController() {
			return new ReportsController();
		}

	}

	@RestController
	static class ReportsController {

		@GetMapping("/tenants/{tenant}/shared")
		@RateLimited(name = "shared-key", limit = 2, window = "1m", key = "'everyone'", tenant = "#tenant")
		String shared(@PathVariable String tenant) {
			return "shared by " + tenant;
		}

		@GetMapping("/tenants/{tenant}/reports")
		@RateLimited(name = "reports", limit = 2, window = "1m", key = "#tenant", tenant = "#tenant")
		String reports(@PathVariable String tenant) {
			return "reports of " + tenant;
		}

	}

}
