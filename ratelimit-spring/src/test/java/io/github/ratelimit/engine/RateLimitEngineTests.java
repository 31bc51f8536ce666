package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.PolicyMode;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.web.ClientExemptions;
import io.github.ratelimit.web.InvalidRateLimitCostException;
import io.github.ratelimit.web.MockRateLimitRequest;
import io.github.ratelimit.web.RateLimitExceededException;
import io.github.ratelimit.web.RateLimitRequest;
import io.github.ratelimit.web.RateLimitStatus;
import io.github.ratelimit.web.RateLimitUnavailableException;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.http.ResponseEntity;
import org.springframework.http.server.PathContainer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rules the engine applies to one request, whatever the web stack: keys and their fallback, costs, skip, shadow,
 * count by outcome, plans, exemptions, all or nothing within a layer, the layers' hand-off, and the headers of the
 * outcome.
 */
class RateLimitEngineTests {

	private final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:30Z");

	private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(this.clock).build();

	private final List<String> shadowRejections = new ArrayList<>();

	private final RateLimiter limiter = RateLimiter.builder(this.store).clock(this.clock).listener(new RateLimitListener() {

		@Override
		public void onShadowRejection(RateLimitPolicy policy, Decision decision) {
			RateLimitEngineTests.this.shadowRejections.add(policy.name());
		}

	}).build();

	@Test
	void aKeyExpressionWithoutAValueFallsBackToTheClientAddressInANamespaceOfItsOwn() {
		RateLimitEngine engine = engine((catalog) -> {
		});
		for (Object user : new Object[] { null, "", new Object() }) {
			RateLimitOutcome outcome = decide(engine, "byUser", new Object[] { user }, request("198.51.100.1"));
			assertThat(outcome.isRejected()).isFalse();
		}
		assertThat(this.store.peek(policy(engine, "byUser"), "#ip:198.51.100.1").remaining()).isZero();
		assertThat(decide(engine, "byUser", new Object[] { "#ip:198.51.100.1" }, request("198.51.100.2")).isRejected())
			.as("a value imitating the fallback is a key of its own").isFalse();
	}

	@Test
	void aCostExpressionTakesThatManyUnitsAndAnInvalidOneCountsNothing() {
		RateLimitEngine engine = engine((catalog) -> {
		});
		assertThat(decide(engine, "costly", new Object[] { 7 }, request("198.51.100.1")).limits().get(0).decision()
			.remaining()).isEqualTo(3);
		assertThat(decide(engine, "costly", new Object[] { 0 }, request("198.51.100.1")).rejection())
			.isInstanceOf(InvalidRateLimitCostException.class);
		assertThat(this.store.peek(policy(engine, "costly"), "198.51.100.1").remaining()).isEqualTo(3);
	}

	@Test
	void aCostExpressionThatThrowsCountsThePolicysCapacityUnlessThePolicyFailsClosed() {
		for (FailureMode mode : FailureMode.values()) {
			RateLimitEngine engine = engine((catalog) -> catalog.policies(
					Map.of("failingCost", values("ratelimit.policies.failingCost", "failure-mode", mode))));
			MockRateLimitRequest request = request("198.51.100." + mode.ordinal());
			if (mode == FailureMode.DENY) {
				assertThat(decide(engine, "failingCost", new Object[0], request).rejection())
					.isInstanceOf(RateLimitUnavailableException.class);
				continue;
			}
			assertThat(decide(engine, "failingCost", new Object[0], request).limits().get(0).decision().remaining())
				.as(mode.name()).isZero();
			assertThat(decide(engine, "failingCost", new Object[0], request).isRejected()).as(mode.name()).isTrue();
		}
	}

	@Test
	void aSkipConditionThatHoldsNeitherCountsNorLimitsAndOneThatFailsDoesNotSkip() {
		RateLimitEngine engine = engine((catalog) -> {
		});
		for (int i = 0; i < 3; i++) {
			assertThat(decide(engine, "skipped", new Object[] { true }, request("198.51.100.1")).limits()).isEmpty();
		}
		assertThat(decide(engine, "skipped", new Object[] { false }, request("198.51.100.1")).isRejected()).isFalse();
		assertThat(decide(engine, "skipped", new Object[] { null }, request("198.51.100.1")).isRejected())
			.as("a condition that yields no boolean applies the policy").isTrue();
	}

	@Test
	void aShadowPolicyCountsAndReportsButNeverRejects() {
		RateLimitEngine engine = engine((catalog) -> {
		});
		for (int i = 0; i < 3; i++) {
			RateLimitOutcome outcome = decide(engine, "shadow", new Object[0], request("198.51.100.1"));
			assertThat(outcome.isRejected()).isFalse();
			assertThat(outcome.headers().isEmpty()).as("a shadow policy sends no headers").isTrue();
		}
		assertThat(this.shadowRejections).containsExactly("shadow", "shadow");
	}

	@Test
	void aPolicyCountingByOutcomeGivesBackWhatAnotherOutcomeTook() throws Exception {
		RateLimitEngine engine = engine((catalog) -> {
		});
		Method login = Api.class.getMethod("login", boolean.class);
		for (int i = 0; i < 5; i++) {
			MockRateLimitRequest request = request("198.51.100.1");
			RateLimitOutcome outcome = decideMethod(engine, login, Api.class, new Object[] { true }, request);
			engine.settlement().settle(outcome, request, login, ResponseEntity.ok("welcome"), null);
		}
		MockRateLimitRequest failed = request("198.51.100.1");
		RateLimitOutcome outcome = decideMethod(engine, login, Api.class, new Object[] { false }, failed);
		engine.settlement().settle(outcome, failed, login, ResponseEntity.status(401).build(), null);
		assertThat(this.store.peek(policy(engine, "login"), "198.51.100.1").remaining()).isEqualTo(1);
	}

	@Test
	void aWebStackThatSettlesFromTheStatusTheClientGetsSettlesEveryLayerOnce() throws Exception {
		RateLimitEngine engine = engine((catalog) -> {
		});
		Method login = Api.class.getMethod("login", boolean.class);
		MockRateLimitRequest request = request("198.51.100.1");
		engine.settlement().settledByStack(request);
		RateLimitOutcome outcome = decideMethod(engine, login, Api.class, new Object[] { false }, request);
		// The method returned 200, but an exception handler answered 401: the stack knows, the method does not.
		engine.settlement().settle(outcome, request, login, ResponseEntity.ok("welcome"), null);
		assertThat(engine.settlement().hasPendingSettlement(request)).isTrue();
		settleRequest(engine, request, 401);
		assertThat(this.store.peek(policy(engine, "login"), "198.51.100.1").remaining()).isEqualTo(1);
	}

	@Test
	void aPlanChangesThePolicyForItsClientsWithCountsOfTheirOwnAndAnUnknownPlanIsTheDefault() {
		AtomicReference<String> plan = new AtomicReference<>("pro");
		RateLimitEngine engine = engine(
				(catalog) -> catalog.plans(Map.of("free", Map.of(), "pro",
						Map.of("quota", values("ratelimit.plans.pro.quota", "limit", 3))), "free"),
				(builder) -> builder.planResolver((request) -> plan.get()));
		for (int i = 0; i < 3; i++) {
			assertThat(decide(engine, "quota", new Object[0], request("198.51.100.1")).isRejected()).isFalse();
		}
		assertThat(decide(engine, "quota", new Object[0], request("198.51.100.1")).isRejected()).isTrue();
		plan.set("platinum");
		RateLimitOutcome free = decide(engine, "quota", new Object[0], request("198.51.100.1"));
		assertThat(free.isRejected()).isFalse();
		assertThat(free.limits().get(0).policy().limit()).isEqualTo(1);
	}

	@Test
	void anExemptClientIsLimitedOnlyByPoliciesWithAKeyOfTheirOwn() {
		RateLimitEngine engine = engine((catalog) -> {
		}, (builder) -> builder.exempt(ClientExemptions.of(List.of("198.51.100.0/24"))));
		for (int i = 0; i < 5; i++) {
			assertThat(decide(engine, "one", new Object[0], request("198.51.100.1")).limits()).isEmpty();
		}
		for (int i = 0; i < 3; i++) {
			assertThat(decide(engine, "byUser", new Object[] { "alice" }, request("198.51.100.1")).isRejected())
				.isFalse();
		}
		assertThat(decide(engine, "byUser", new Object[] { "alice" }, request("198.51.100.1")).isRejected()).isTrue();
	}

	@Test
	void aTenantsPolicyIsBuiltOffTheRequestsThreadAlsoAfterAChangeAndInvalidLimitsAreNotParsedAgain() {
		List<String> builtOn = new CopyOnWriteArrayList<>();
		// initech's limits are ones the store refuses: invalid, each time they are built.
		RateLimitTenants tenants = new RateLimitTenants((policy, tenant) -> tenant.equals("acme")
				? TenantLimits.ofLimit(5) : TenantLimits.ofLimit(7), RateLimitTenants.boundedCache(100),
				Duration.ofSeconds(10), Duration.ofHours(1), 1);
		try {
			// byTenant is 10 a minute: once requests come, a policy of 5 or 7 is a tenant's, built by the parser.
			RateLimitEngine engine = engine((catalog) -> catalog.storeCheck((policy) -> {
				if (policy.limit() == 5 || policy.limit() == 7) {
					builtOn.add(Thread.currentThread().getName());
				}
				if (policy.limit() == 7) {
					throw new IllegalArgumentException("the store cannot count 7");
				}
			}), (builder) -> builder.tenants(tenants));
			builtOn.clear(); // other policies of the API, parsed at start-up
			for (int i = 0; i < 3; i++) {
				assertThat(decide(engine, "byTenant", new Object[] { "acme" }, request("198.51.100.1")).headers()
					.getFirst("RateLimit-Limit")).isEqualTo("5");
			}
			engine.catalog().change("byTenant", List.of(values(PolicyValues.RUNTIME, "window", "2m")));
			for (int i = 0; i < 3; i++) {
				decide(engine, "byTenant", new Object[] { "acme" }, request("198.51.100.1"));
				decide(engine, "byTenant", new Object[] { "initech" }, request("198.51.100.1"));
			}
			assertThat(builtOn).as("the threads acme's policy was built on, once per version, and initech's once")
				.hasSize(3)
				.allMatch((thread) -> thread.startsWith("ratelimit-tenants-"));
		}
		finally {
			tenants.close();
		}
	}

	@Test
	void aRequestOneLimitRejectsTakesNothingFromTheOthersAndTheHeadersShowTheRejectingOne() {
		RateLimitEngine engine = engine((catalog) -> {
		});
		assertThat(decide(engine, "both", new Object[0], request("198.51.100.1")).isRejected()).isFalse();
		RateLimitOutcome rejected = decide(engine, "both", new Object[0], request("198.51.100.1"));
		assertThat(rejected.isRejected()).isTrue();
		assertThat(((RateLimitExceededException) rejected.rejection()).getBody().getProperties())
			.containsEntry("violated-policies", List.of("perSecond"));
		assertThat(rejected.headers().getFirst("RateLimit-Limit")).isEqualTo("1");
		assertThat(rejected.headers().getFirst("Retry-After")).isEqualTo("1");
		assertThat(this.store.peek(policy(engine, "perMinute"), "198.51.100.1").remaining()).isEqualTo(4);
		this.clock.advance(Duration.ofSeconds(1));
		RateLimitOutcome admitted = decide(engine, "both", new Object[0], request("198.51.100.1"));
		assertThat(admitted.limits()).extracting((limit) -> limit.policy().name()).containsExactly("perSecond",
				"perMinute");
	}

	@Test
	void theFilterLayerKeepsWhatItTookWhenTheMethodRejectsAndASharedPolicyIsDrawnOncePerRequest() throws Exception {
		RateLimitEngine engine = engine((catalog) -> catalog
			.policies(Map.of("account", values("ratelimit.policies.account", "limit", 100, "window", "1m", "key",
					"'application'")))
			.filters(List.of(new FilterDefinition("edge", 0, List.of("/api/**"), List.of("GET"),
					values("ratelimit.filters.edge", "limit", 10, "window", "1m"), List.of("account")))));
		engine.catalog().register(LayeredApi.class);
		for (int i = 0; i < 3; i++) {
			MockRateLimitRequest request = request("198.51.100.1");
			RateLimitOutcome filters = decideFilters(engine, request, List.of(PathContainer.parsePath("/api/one")));
			assertThat(filters.limits()).hasSize(2);
			RateLimitOutcome method = decideMethod(engine, LayeredApi.class.getMethod("drawsAccount"), LayeredApi.class,
					new Object[0], request);
			assertThat(method).isNotNull();
			if (i < 2) {
				assertThat(method.isRejected()).isFalse();
				assertThat(RateLimitStatus.of(request).limits()).extracting((limit) -> limit.policy().name())
					.containsExactlyInAnyOrder("drawsAccount", "edge", "account");
			}
			else {
				assertThat(method.isRejected()).isTrue();
				assertThat(method.headers().getFirst("Retry-After")).isNotNull();
			}
		}
		assertThat(this.store.peek(policy(engine, "edge"), "198.51.100.1").remaining()).isEqualTo(7);
		assertThat(this.store.peek(policy(engine, "account"), "application").remaining())
			.as("drawn by the filter layer only").isEqualTo(97);
	}

	@Test
	void aFilterOnGetAppliesToHeadAndToAnyPathTheStackMayMatch() {
		RateLimitEngine engine = engine((catalog) -> catalog.filters(List.of(new FilterDefinition("edge", 0,
				List.of("/api/**"), List.of("GET"), values("ratelimit.filters.edge", "limit", 1, "window", "1m"),
				List.of()))));
		assertThat(decideFilters(engine, new MockRateLimitRequest("POST"), List.of(PathContainer.parsePath("/api/x")))
			.limits()).isEmpty();
		assertThat(decideFilters(engine, new MockRateLimitRequest("HEAD"), List.of(PathContainer.parsePath("/api/x")))
			.isRejected()).isFalse();
		assertThat(decideFilters(engine, new MockRateLimitRequest("GET"),
				List.of(PathContainer.parsePath("//api/x"), PathContainer.parsePath("/api/x")))
			.isRejected()).isTrue();
	}

	@Test
	void outsideOfARequestTheClientAddressIsOneKeyAndNothingIsSetOnAResponse() {
		RateLimitEngine engine = engine((catalog) -> {
		});
		decide(engine, "one", new Object[0], null);
		decide(engine, "one", new Object[0], null);
		RateLimitOutcome outcome = decide(engine, "one", new Object[0], null);
		assertThat(outcome.isRejected()).isTrue();
		assertThat(this.store.peek(policy(engine, "one"), "#none").remaining()).isZero();
	}

	/** Decide a method's layer; {@link RateLimitEngineNonBlockingTests} does it without waiting. */
	@Nullable RateLimitOutcome decideMethod(RateLimitEngine engine, Method method, Class<?> targetClass,
			Object[] arguments, @Nullable RateLimitRequest request) {
		return engine.decideMethod(method, targetClass, arguments, request);
	}

	RateLimitOutcome decideFilters(RateLimitEngine engine, RateLimitRequest request, List<PathContainer> paths) {
		return engine.decideFilters(request, paths);
	}

	void settleRequest(RateLimitEngine engine, RateLimitRequest request, int status) {
		engine.settlement().settleRequest(request, status);
	}

	private RateLimitEngine engine(Consumer<PolicyCatalog.Builder> catalog) {
		return engine(catalog, (builder) -> {
		});
	}

	private RateLimitEngine engine(Consumer<PolicyCatalog.Builder> catalog, Consumer<RateLimitEngine.Builder> engine) {
		PolicyCatalog.Builder catalogBuilder = PolicyCatalog.builder();
		catalog.accept(catalogBuilder);
		PolicyCatalog built = catalogBuilder.build();
		built.register(Api.class);
		RateLimitEngine.Builder builder = RateLimitEngine.builder(built, this.limiter,
				new StandardRateLimitHeadersWriter(), (request) -> String.valueOf(request.getRemoteAddr()));
		engine.accept(builder);
		return builder.build();
	}

	private RateLimitOutcome decide(RateLimitEngine engine, String method, Object[] arguments,
			MockRateLimitRequest request) {
		for (Method candidate : Api.class.getMethods()) {
			if (candidate.getName().equals(method)) {
				RateLimitOutcome outcome = decideMethod(engine, candidate, Api.class, arguments, request);
				assertThat(outcome).as(method).isNotNull();
				return outcome;
			}
		}
		throw new IllegalArgumentException(method);
	}

	private static RateLimitPolicy policy(RateLimitEngine engine, String name) {
		PolicySpec spec = engine.catalog().policy(name);
		assertThat(spec).as(name).isNotNull();
		return spec.policy();
	}

	private static MockRateLimitRequest request(String address) {
		return new MockRateLimitRequest().setRemoteAddr(address);
	}

	private static PolicyValues values(String source, Object... namesAndValues) {
		Map<String, Object> values = new java.util.LinkedHashMap<>();
		for (int i = 0; i < namesAndValues.length; i += 2) {
			values.put((String) namesAndValues[i], namesAndValues[i + 1]);
		}
		return new PolicyValues(source, values);
	}

	public static class Api {

		@RateLimited(name = "one", limit = 2, window = "1m")
		public String one() {
			return "one";
		}

		@RateLimited(name = "byUser", limit = 3, window = "1m", key = "#user")
		public String byUser(Object user) {
			return "user";
		}

		@RateLimited(name = "byTenant", limit = 10, window = "1m", key = "#tenant", tenant = "#tenant")
		public String byTenant(String tenant) {
			return "tenant";
		}

		@RateLimited(name = "costly", limit = 10, window = "1m", cost = "#units")
		public String costly(int units) {
			return "costly";
		}

		@RateLimited(name = "failingCost", limit = 5, window = "1m", cost = "T(java.lang.Integer).parseInt('x')")
		public String failingCost() {
			return "failing";
		}

		@RateLimited(name = "skipped", limit = 1, window = "1m", skip = "#internal")
		public String skipped(Boolean internal) {
			return "skipped";
		}

		@RateLimited(name = "shadow", limit = 1, window = "1m", mode = PolicyMode.SHADOW)
		public String shadow() {
			return "shadow";
		}

		@RateLimited(name = "login", limit = 2, window = "1m", countOn = "401")
		public ResponseEntity<String> login(boolean ok) {
			return ok ? ResponseEntity.ok("welcome") : ResponseEntity.status(401).build();
		}

		@RateLimited(name = "quota", limit = 1, window = "1m")
		public String quota() {
			return "quota";
		}

		@RateLimited(name = "perSecond", limit = 1, window = "1s")
		@RateLimited(name = "perMinute", limit = 5, window = "1m")
		public String both() {
			return "both";
		}

	}

	/** A method drawing the shared quota {@code account}, which only the filter layer's test configures. */
	public static class LayeredApi {

		@RateLimited(name = "drawsAccount", limit = 2, window = "1m")
		@RateLimited(name = "account")
		public String drawsAccount() {
			return "account";
		}

	}

}
