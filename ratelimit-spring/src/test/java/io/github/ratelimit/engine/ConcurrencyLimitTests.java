package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.web.MockRateLimitRequest;
import io.github.ratelimit.web.RateLimitExceededException;
import io.github.ratelimit.web.RateLimitHeaderStyle;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Concurrency limits ({@code algorithm = CONCURRENCY}): at most {@code limit} requests of a key in flight, each
 * slot given back when its request ends, however it ends; a slot never given back is free once its hold passed.
 */
class ConcurrencyLimitTests {

	private static final String CLIENT = "198.51.100.7";

	final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:30Z");

	final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(this.clock).build();

	final RateLimitEngine engine = engine();

	@Test
	void aSlotIsHeldUntilItsRequestEndsHoweverItEnds() throws Exception {
		Method report = Api.class.getMethod("report");
		MockRateLimitRequest first = request();
		RateLimitOutcome one = decide(report, first);
		RateLimitOutcome two = decide(report, request());
		assertThat(one.isRejected()).isFalse();
		assertThat(two.isRejected()).isFalse();
		this.clock.advance(Duration.ofSeconds(50));
		assertThat(decide(report, request()).isRejected()).as("two in flight, 50s on").isTrue();
		this.engine.settlement().settle(one, first, report, "done", null);
		RateLimitOutcome three = decide(report, request());
		assertThat(three.isRejected()).as("one ended").isFalse();
		assertThat(decide(report, request()).isRejected()).isTrue();
		this.engine.settlement().settle(two, null, report, null, new IllegalStateException("failed"));
		assertThat(decide(report, request()).isRejected()).as("one failed: its slot is given back too").isFalse();
		assertThat(decide(report, request()).isRejected()).isTrue();
		assertThat(decide(report, request().setRemoteAddr("198.51.100.8")).isRejected()).as("another client")
			.isFalse();
	}

	@Test
	void aRejectionSaysWhatLimitedItAndPromisesNoRetryTime() throws Exception {
		Method report = Api.class.getMethod("report");
		decide(report, request());
		decide(report, request());
		RateLimitOutcome rejected = decide(report, request());
		assertThat(rejected.rejection()).isExactlyInstanceOf(RateLimitExceededException.class);
		assertThat(rejected.rejection().getStatusCode().value()).isEqualTo(429);
		assertThat(rejected.headers().getFirst("RateLimit-Policy")).isEqualTo("\"report\";q=2;qu=\"concurrent-requests\"");
		assertThat(rejected.headers().getFirst("RateLimit")).isEqualTo("\"report\";r=0");
		assertThat(rejected.headers().containsHeader("Retry-After")).isFalse();
		assertThat(rejected.rejection().getBody().getProperties()).containsEntry("policy", "report")
			.doesNotContainKey("retryAfter");
		assertThat(rejected.rejection().getBody().getDetail()).contains("Concurrency limit of policy 'report'");
		assertThat(((RateLimitExceededException) rejected.rejection()).getRetryAfterSeconds()).isZero();
	}

	@Test
	void aSlotItsRequestNeverGaveBackIsFreeOnceTheHoldPassed() throws Exception {
		Method report = Api.class.getMethod("report");
		decide(report, request());
		decide(report, request()); // their holder died: never settled
		this.clock.advance(Duration.ofSeconds(59));
		assertThat(decide(report, request()).isRejected()).isTrue();
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(decide(report, request()).isRejected()).as("a minute, the default hold").isFalse();
	}

	@Test
	void aRequestThatARateLimitRejectsHoldsNoSlot() throws Exception {
		Method both = Api.class.getMethod("both");
		MockRateLimitRequest first = request();
		RateLimitOutcome admitted = decide(both, first);
		assertThat(admitted.isRejected()).isFalse();
		this.engine.settlement().settle(admitted, first, both, "done", null);
		for (int i = 0; i < 3; i++) {
			RateLimitOutcome rejected = decide(both, request());
			assertThat(rejected.isRejected()).isTrue();
			assertThat(rejected.rejection().getBody().getProperties()).containsEntry("policy", "once");
		}
		assertThat(this.store.peek(policy("slots"), CLIENT).remaining()).as("no slot held").isEqualTo(3);
	}

	@Test
	void aMethodGivesItsSlotBackWhenItReturnsAndAnAsynchronousResultWhenItsRequestEnds() throws Exception {
		Method report = Api.class.getMethod("report");
		MockRateLimitRequest request = request();
		this.engine.settlement().settledByStack(request);
		RateLimitOutcome returned = decide(report, request);
		this.engine.settlement().settle(returned, request, report, "done", null);
		assertThat(this.store.peek(policy("report"), CLIENT).remaining()).as("its work is done").isEqualTo(2);

		MockRateLimitRequest streaming = request();
		this.engine.settlement().settledByStack(streaming);
		RateLimitOutcome outcome = decide(report, streaming);
		this.engine.settlement().settleWhenRequestCompletes(outcome, streaming, report, new CompletableFuture<>());
		assertThat(this.store.peek(policy("report"), CLIENT).remaining()).as("its result is still served").isOne();
		this.engine.settlement().settleRequestAsync(streaming, 200).toCompletableFuture().join();
		assertThat(this.store.peek(policy("report"), CLIENT).remaining()).as("committed, not ended").isOne();
		this.engine.settlement().releaseRequestAsync(streaming).toCompletableFuture().join();
		assertThat(this.store.peek(policy("report"), CLIENT).remaining()).isEqualTo(2);
		this.engine.settlement().releaseRequestAsync(streaming).toCompletableFuture().join();
		assertThat(this.store.peek(policy("report"), CLIENT).remaining()).as("given back once").isEqualTo(2);
	}

	@Test
	void aLayerDecidedAfterItsRequestEndedGivesItsSlotBackAtOnce() throws Exception {
		Method report = Api.class.getMethod("report");
		MockRateLimitRequest request = request();
		this.engine.settlement().settledByStack(request);
		this.engine.settlement().releaseRequestAsync(request).toCompletableFuture().join(); // the client went away
		RateLimitOutcome late = decide(report, request); // the store answered after that
		this.engine.settlement().settleAsync(late, request, report, null, null).toCompletableFuture().join();
		assertThat(this.store.peek(policy("report"), CLIENT).remaining()).isEqualTo(2);
	}

	@Test
	void aHoldIsSetInPropertiesAndWhatCannotApplyToASlotFailsTheStartUpNamingIt() {
		PolicyCatalog held = PolicyCatalog.builder()
			.policies(Map.of("report", values("ratelimit.policies.report", "hold", "5m")))
			.build();
		held.register(Api.class);
		PolicySpec report = held.policy("report");
		assertThat(report.policy().window()).isEqualTo(Duration.ofMinutes(5));
		assertThat(report.sources()).containsEntry("hold", "ratelimit.policies.report.hold").doesNotContainKey("window");
		Map<String, String> refused = new LinkedHashMap<>();
		refused.put("window", "'window' does not apply to CONCURRENCY");
		refused.put("cost", "'cost' does not apply to CONCURRENCY");
		refused.put("count-on", "'count-on' does not apply to CONCURRENCY");
		refused.put("penalty", "'penalty' does not apply to CONCURRENCY");
		refused.put("max-wait", "'max-wait' does not apply to CONCURRENCY");
		refused.put("lease", "'lease' cannot apply to CONCURRENCY");
		refused.put("tenant", "'tenant' does not apply to CONCURRENCY");
		Map<String, Object> bad = Map.of("window", "1m", "cost", "2", "count-on", java.util.List.of("4xx"), "penalty",
				"1h", "max-wait", "1s", "lease", "5", "tenant", "'acme'");
		refused.forEach((attribute, message) -> {
			PolicyCatalog catalog = PolicyCatalog.builder()
				.policies(Map.of("report", values("ratelimit.policies.report", attribute, bad.get(attribute))))
				.build();
			assertThatExceptionOfType(InvalidRateLimitPolicyException.class).isThrownBy(() -> catalog.register(Api.class))
				.withMessageContaining(message)
				.withMessageContaining("ratelimit.policies.report." + attribute);
		});
		for (String hold : new String[] { "forever", "0s", "2d", "30" }) {
			PolicyCatalog catalog = PolicyCatalog.builder()
				.policies(Map.of("report", values("ratelimit.policies.report", "hold", hold)))
				.build();
			assertThatExceptionOfType(InvalidRateLimitPolicyException.class).isThrownBy(() -> catalog.register(Api.class))
				.withMessageContaining("'hold' must be a duration with a unit of at least 1ms and at most a day")
				.withMessageContaining("'" + hold + "'")
				.withMessageContaining("(from ratelimit.policies.report.hold)");
		}
		PolicyCatalog plannedWindow = PolicyCatalog.builder()
			.plans(Map.of("pro", Map.of("report", values("ratelimit.plans.pro.report", "window", "1h"))), null)
			.build();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> plannedWindow.register(Api.class))
			.withMessageContaining("'window' does not apply to CONCURRENCY: a plan changes its limit");
		PolicyCatalog holdOnAWindow = PolicyCatalog.builder()
			.policies(Map.of("once", values("ratelimit.policies.once", "hold", "1m")))
			.build();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> holdOnAWindow.register(Api.class))
			.withMessageContaining("'hold' applies to CONCURRENCY only, not to FIXED");
	}

	private MockRateLimitRequest request() {
		return new MockRateLimitRequest().setRemoteAddr(CLIENT);
	}

	private RateLimitOutcome decide(Method method, MockRateLimitRequest request) {
		RateLimitOutcome outcome = this.engine.decideMethod(method, Api.class, new Object[0], request);
		assertThat(outcome).isNotNull();
		return outcome;
	}

	private RateLimitPolicy policy(String name) {
		PolicySpec spec = this.engine.catalog().policy(name);
		assertThat(spec).isNotNull();
		return spec.policy();
	}

	private RateLimitEngine engine() {
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		catalog.register(Api.class);
		return RateLimitEngine
			.builder(catalog, RateLimiter.builder(this.store).clock(this.clock).build(),
					new StandardRateLimitHeadersWriter(Set.of(RateLimitHeaderStyle.DRAFT_11),
							RateLimitHeaderStyle.ResetFormat.DELTA_SECONDS, this.clock),
					(request) -> String.valueOf(request.getRemoteAddr()))
			.build();
	}

	private static PolicyValues values(String source, String name, Object value) {
		return new PolicyValues(source, Map.of(name, value));
	}

	public static class Api {

		@RateLimited(name = "report", algorithm = Algorithm.CONCURRENCY, limit = 2)
		public String report() {
			return "report";
		}

		@RateLimited(name = "once", limit = 1, window = "1m")
		@RateLimited(name = "slots", algorithm = Algorithm.CONCURRENCY, limit = 3)
		public String both() {
			return "both";
		}

	}

}
