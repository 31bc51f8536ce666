package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.annotation.RateLimited;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The catalogue: one spec per policy whatever declared it, each value with its source, checked at start-up; lookups
 * that build nothing.
 */
@ExtendWith(OutputCaptureExtension.class)
class PolicyCatalogTests {

	@Test
	void aRequestOnAClassNoContextRegisteredFindsNoPolicyParsesNothingAndIsWarnedOfOnce(CapturedOutput output)
			throws Exception {
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		Method orders = Orders.class.getMethod("orders", String.class);
		for (int i = 0; i < 3; i++) {
			assertThat(catalog.lookup(orders, Orders.class)).as("the policies of a class never registered").isNull();
		}
		assertThat(catalog.policies()).as("policies parsed by the requests").isEmpty();
		assertThat(output.getAll().lines().filter((line) -> line.contains(Orders.class.getName()
				+ " are called on an instance that no application context registered"))).hasSize(1);
		catalog.register(Orders.class);
		assertThat(catalog.lookup(orders, Orders.class)).as("once registered").isNotNull();
	}

	@Test
	void aPropertyOverridesTheAnnotationAndEachValueSaysWhereItCameFrom() {
		PolicyCatalog catalog = PolicyCatalog.builder()
			.policies(Map.of("orders", values("ratelimit.policies.orders", "limit", 20L, "algorithm",
					Algorithm.TOKEN_BUCKET)))
			.defaultFailureMode(FailureMode.DENY)
			.build();
		catalog.register(Orders.class);
		PolicySpec orders = catalog.policy("orders");
		assertThat(orders).isNotNull();
		assertThat(orders.policy().limit()).isEqualTo(20);
		assertThat(orders.policy().window()).isEqualTo(Duration.ofMinutes(1));
		assertThat(orders.policy().failureMode()).isEqualTo(FailureMode.DENY);
		assertThat(orders.sources()).containsExactly(Map.entry("algorithm", "ratelimit.policies.orders.algorithm"),
				Map.entry("limit", "ratelimit.policies.orders.limit"), Map.entry("window", "annotation"),
				Map.entry("burst", "default"), Map.entry("failure-mode", "ratelimit.failure-mode"),
				Map.entry("mode", "default"), Map.entry("description", "default"), Map.entry("lease", "default"),
				Map.entry("key", "annotation"), Map.entry("cost", "default"),
				Map.entry("count-on", "default"), Map.entry("skip", "default"), Map.entry("settle", "default"),
				Map.entry("tenant", "default"), Map.entry("penalty", "default"), Map.entry("penalty-group", "default"),
				Map.entry("max-wait", "default"), Map.entry("max-queued", "default"),
				Map.entry("enabled", "default"));
		assertThat(catalog.declaredBy("orders")).containsExactly("Orders#orders(String)");
	}

	@Test
	void everyAttributeThatDecidesARequestRecordsTheSourceOfItsValue() {
		PolicyCatalog catalog = PolicyCatalog.builder()
			.policies(Map.of("orders", values("ratelimit.policies.orders", "cost", "2", "skip", "#user == 'admin'",
					"count-on", List.of("4xx"))))
			.build();
		catalog.register(Orders.class);
		PolicySpec orders = catalog.policy("orders");
		assertThat(orders).isNotNull();
		assertThat(orders.sources()).containsEntry("key", "annotation")
			.containsEntry("cost", "ratelimit.policies.orders.cost")
			.containsEntry("skip", "ratelimit.policies.orders.skip")
			.containsEntry("count-on", "ratelimit.policies.orders.count-on")
			.containsEntry("settle", "default")
			.containsEntry("tenant", "default")
			.containsEntry("enabled", "default");
	}

	@Test
	void aTenantsLimitsAreReadAndCheckedByTheParserOverTheChangeAtRunTime() {
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		catalog.register(Orders.class);
		PolicySpec orders = catalog.policy("orders");
		assertThat(orders).isNotNull();
		catalog.change("orders", List.of(values(PolicyValues.RUNTIME, "window", "1h")));
		RateLimitPolicy acme = orders.forTenant("acme", values("tenant 'acme'", "limit", 3L));
		assertThat(acme.limit()).isEqualTo(3);
		assertThat(acme.window()).as("the change at run time, under the tenant's limit").isEqualTo(Duration.ofHours(1));
		assertThat(acme.variant()).startsWith("tenant=acme");
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> orders.forTenant("acme", values("tenant 'acme'", "limit", 0L)))
			.withMessageContaining("'limit'");
	}

	@Test
	void aPlanMakesAVariantOfItsOwnAndSaysWhichValuesItChanged() {
		PolicyCatalog catalog = PolicyCatalog.builder()
			.plans(Map.of("pro", Map.of("orders", values("ratelimit.plans.pro.orders", "limit", 100))), "pro")
			.build();
		catalog.register(Orders.class);
		PolicySpec orders = catalog.policy("orders");
		assertThat(orders.plans().get("pro").limit()).isEqualTo(100);
		assertThat(orders.plans().get("pro").variant()).isEqualTo("pro");
		assertThat(orders.planSources().get("pro")).containsExactly(Map.entry("limit", "ratelimit.plans.pro.orders.limit"),
				Map.entry("window", "policy"));
	}

	@Test
	void aMonthlyQuotasPlansChangesAndTenantsKeepItsZoneForCalendarWindowsAndMayCountADurationFromTheEpoch() {
		PolicyCatalog catalog = PolicyCatalog.builder()
			.policies(Map.of("orders", values("ratelimit.policies.orders", "window", "1M", "zone", "Europe/Berlin")))
			.plans(Map.of("hourly", Map.of("orders", values("ratelimit.plans.hourly.orders", "window", "1h")), "daily",
					Map.of("orders", values("ratelimit.plans.daily.orders", "window", "1d"))), null)
			.build();
		catalog.register(Orders.class);
		PolicySpec orders = catalog.policy("orders");
		CalendarWindow berlinMonth = CalendarWindow.of(CalendarWindow.Period.MONTH, ZoneId.of("Europe/Berlin"));
		assertThat(orders.policy().calendar()).isEqualTo(berlinMonth);
		assertThat(orders.sources()).containsEntry("window", "ratelimit.policies.orders.window")
			.containsEntry("zone", "ratelimit.policies.orders.zone");
		assertThat(orders.plans().get("hourly").calendar()).isNull();
		assertThat(orders.plans().get("hourly").window()).isEqualTo(Duration.ofHours(1));
		assertThat(orders.plans().get("daily").calendar())
			.isEqualTo(CalendarWindow.of(CalendarWindow.Period.DAY, ZoneId.of("Europe/Berlin")));
		assertThat(orders.forTenant("acme", values("tenant 'acme'", "window", Duration.ofHours(2))).window())
			.isEqualTo(Duration.ofHours(2));
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> catalog.change("orders", List.of(values(PolicyValues.RUNTIME, "window", "99999999"))))
			.withMessageContaining("'window' must have a unit");
		catalog.change("orders", List.of(values(PolicyValues.RUNTIME, "window", "1w")));
		assertThat(catalog.policy("orders").policy().describeWindow()).isEqualTo("1w in Europe/Berlin");
	}

	@Test
	void aLeaseIsReadFromTheAnnotationOrAPropertyAndRefusedOnASlidingLogWithAdvice() {
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		catalog.register(Leased.class);
		assertThat(catalog.policy("hot").policy().lease()).isEqualTo(RateLimitPolicy.LEASE_AUTO);
		assertThat(catalog.policy("hot").sources()).containsEntry("lease", "annotation");
		PolicyCatalog overridden = PolicyCatalog.builder()
			.policies(Map.of("hot", values("ratelimit.policies.hot", "lease", "50")))
			.build();
		overridden.register(Leased.class);
		assertThat(overridden.policy("hot").policy().lease()).isEqualTo(50);
		assertThat(overridden.policy("hot").sources()).containsEntry("lease", "ratelimit.policies.hot.lease");
		PolicyCatalog onALog = PolicyCatalog.builder()
			.policies(Map.of("hot", values("ratelimit.policies.hot", "algorithm", Algorithm.SLIDING_LOG)))
			.build();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> onALog.register(Leased.class))
			.withMessageContaining("Leased#hot()")
			.withMessageContaining("'lease' cannot apply to SLIDING_LOG")
			.withMessageContaining("Use SLIDING_COUNTER, FIXED or a bucket");
		PolicyCatalog tooLarge = PolicyCatalog.builder()
			.policies(Map.of("hot", values("ratelimit.policies.hot", "lease", "2000")))
			.build();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> tooLarge.register(Leased.class))
			.withMessageContaining("'lease' must be at most the limit (1000) but was 2000")
			.withMessageContaining("(from ratelimit.policies.hot.lease)");
		PolicyCatalog notANumber = PolicyCatalog.builder()
			.policies(Map.of("hot", values("ratelimit.policies.hot", "lease", "lots")))
			.build();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> notANumber.register(Leased.class))
			.withMessageContaining("'lease' must be 'auto' or a number of units of at least 1 but was 'lots'");
	}

	@Test
	void twoMethodsDeclaringOneNameDifferentlyFailNamingBoth() {
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		catalog.register(Orders.class);
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> catalog.register(OtherOrders.class))
			.withMessageContaining("OtherOrders#list()")
			.withMessageContaining("also declared by Orders#orders(String)");
	}

	@Test
	void aConfiguredPolicyThatNothingDeclaresFailsTheStartNamingTheKnownOnes() {
		PolicyCatalog catalog = PolicyCatalog.builder()
			.policies(Map.of("ordres", values("ratelimit.policies.ordres", "limit", 5L)))
			.build();
		catalog.register(Orders.class);
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(catalog::afterSingletonsInstantiated)
			.withMessage("ratelimit.policies.ordres does not match any @RateLimited policy. Known policies: orders.");
	}

	@Test
	void aFilterIsAPolicyOfTheSameShapeCheckedAtStartUp() {
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> PolicyCatalog.builder()
				.filters(List.of(new FilterDefinition("edge", 0, List.of("/api/**"), List.of(),
						values("ratelimit.filters.edge", "limit", 10L, "window", "1 second"), List.of())))
				.build())
			.withMessageContaining("ratelimit.filters.edge: 'window' must be a duration such as 500ms");
		PolicyCatalog catalog = PolicyCatalog.builder()
			.filters(List.of(new FilterDefinition("edge", 0, List.of("/api/**"), List.of(),
					values("ratelimit.filters.edge", "limit", 10L, "window", Duration.ofSeconds(1), "burst", 20L,
							"algorithm", "token-bucket"),
					List.of())))
			.build();
		assertThat(catalog.policy("edge").policy().burst()).isEqualTo(20);
		assertThat(catalog.policy("edge").sources()).containsEntry("burst", "ratelimit.filters.edge.burst")
			.containsEntry("mode", "default");
	}

	/** What a gateway refuses the case variants of: the paths of each filter that is on, in the order they decide. */
	@Test
	void theFiltersPathsAreThoseOfEachFilterThatIsOnInTheOrderTheyDecide() {
		PolicyCatalog catalog = PolicyCatalog.builder()
			.filters(List.of(
					new FilterDefinition("late", 2, List.of("/api/v1/Resources", "/api/v1/users/{id}/**"), List.of(),
							values("ratelimit.filters.late", "limit", 10L, "window", Duration.ofMinutes(1)), List.of()),
					new FilterDefinition("off", 0, List.of("/off"), List.of(), values("ratelimit.filters.off", "limit",
							10L, "window", Duration.ofMinutes(1), "enabled", false), List.of()),
					new FilterDefinition("early", 1, List.of("/api/**"), List.of("GET"),
							values("ratelimit.filters.early", "limit", 10L, "window", Duration.ofMinutes(1)),
							List.of())))
			.build();
		assertThat(catalog.filterPaths()).containsExactly(Map.entry("early", List.of("/api/**")),
				Map.entry("late", List.of("/api/v1/Resources", "/api/v1/users/{id}/**")));
		assertThat(PolicyCatalog.builder().build().filterPaths()).isEmpty();
	}

	@Test
	void aMethodInvokedThroughASuperclassOrAnInterfaceFindsItsPoliciesWithoutBuildingAny() throws Exception {
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		catalog.register(Orders.class);
		catalog.register(SpecialOrders.class);
		MethodLimits direct = catalog.lookup(Orders.class.getMethod("orders", String.class), Orders.class);
		MethodLimits inherited = catalog.lookup(Orders.class.getMethod("orders", String.class), SpecialOrders.class);
		MethodLimits throughInterface = catalog.lookup(OrderApi.class.getMethod("orders", String.class),
				Orders.class);
		assertThat(direct).isNotNull();
		assertThat(inherited).isNotNull().isNotSameAs(direct);
		assertThat(inherited.targetClass).isEqualTo(SpecialOrders.class);
		assertThat(throughInterface).isSameAs(direct);
		assertThat(catalog.lookup(Orders.class.getMethod("orders", String.class), Orders.class)).isSameAs(direct);
	}

	private static PolicyValues values(String source, Object... namesAndValues) {
		Map<String, Object> values = new LinkedHashMap<>();
		for (int i = 0; i < namesAndValues.length; i += 2) {
			values.put((String) namesAndValues[i], namesAndValues[i + 1]);
		}
		return new PolicyValues(source, values);
	}

	interface OrderApi {

		String orders(String user);

	}

	public static class Leased {

		@RateLimited(name = "hot", limit = 1000, window = "1s", lease = "auto")
		public String hot() {
			return "hot";
		}

	}

	public static class Orders implements OrderApi {

		@Override
		@RateLimited(name = "orders", limit = 10, window = "1m", key = "#user")
		public String orders(String user) {
			return "orders";
		}

	}

	public static class SpecialOrders extends Orders {

	}

	public static class OtherOrders {

		@RateLimited(name = "orders", limit = 11, window = "1m")
		public String list() {
			return "orders";
		}

	}

}
