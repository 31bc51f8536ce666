package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.annotation.RateLimited;
import org.junit.jupiter.api.Test;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every kind of bad configuration fails the start with a message naming where, which attribute, and the value.
 */
class InvalidConfigurationTests {

	private final WebApplicationContextRunner runner = WebTestSupport.webApplication();

	@Test
	void limitBelowOne() {
		assertFailsWith(ZeroLimit.class, "@RateLimited on ZeroLimit#list(): 'limit' must be at least 1 but was 0");
	}

	@Test
	void limitBelowOneFromConfiguration() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.valid.limit=-5")
			.run((context) -> assertThat(findCause(context.getStartupFailure()))
				.hasMessage("@RateLimited on Valid#get(String): 'limit' must be at least 1 but was -5 "
						+ "(from ratelimit.policies.valid.limit)"));
	}

	@Test
	void countOnThatIsNotAStatus() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.valid.count-on=401,unauthorized")
			.run((context) -> assertThat(findCause(context.getStartupFailure()))
				.hasMessage("@RateLimited on Valid#get(String): 'count-on' must list HTTP status codes (401) or "
						+ "classes (4xx) but has 'unauthorized' (from ratelimit.policies.valid.count-on)"));
	}

	@Test
	void skipThatDoesNotParse() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.valid.skip=#request.getHeader(")
			.run((context) -> assertThat(findCause(context.getStartupFailure()).getMessage())
				.startsWith("@RateLimited on Valid#get(String): 'skip' is not a valid SpEL expression "
						+ "'#request.getHeader('"));
	}

	@Test
	void filterWithoutPaths() {
		assertPropertiesFail("ratelimit.filters.edge.paths: at least one path "
				+ "pattern is required (such as /api/**)", "ratelimit.filters.edge.limit=10",
				"ratelimit.filters.edge.window=1s");
	}

	@Test
	void filterWithAPathThatIsNotAPattern() {
		assertPropertiesFail("ratelimit.filters.edge.paths[1]: '/api/{id' is not a path pattern",
				"ratelimit.filters.edge.paths=/api/**,/api/{id", "ratelimit.filters.edge.limit=10",
				"ratelimit.filters.edge.window=1s");
	}

	@Test
	void filterWithAnUnknownMethod() {
		assertPropertiesFail("ratelimit.filters.edge.methods[0]: 'FETCH' is not an HTTP method",
				"ratelimit.filters.edge.paths=/api/**", "ratelimit.filters.edge.methods=FETCH",
				"ratelimit.filters.edge.limit=10", "ratelimit.filters.edge.window=1s");
	}

	@Test
	void filterWithoutALimit() {
		assertPropertiesFail("ratelimit.filters.edge: 'limit' is not set",
				"ratelimit.filters.edge.paths=/api/**", "ratelimit.filters.edge.window=1s");
	}

	@Test
	void filterWithABadWindow() {
		assertPropertiesFail("ratelimit.filters.edge: 'window' must be a positive duration but was '0s'",
				"ratelimit.filters.edge.paths=/api/**", "ratelimit.filters.edge.limit=10",
				"ratelimit.filters.edge.window=0s");
	}

	@Test
	void filterDrawingAPolicyThatIsNotDefined() {
		assertPropertiesFail("ratelimit.filters.edge.policies[0] names policy 'acount', which is not defined "
				+ "under ratelimit.policies", "ratelimit.filters.edge.paths=/api/**", "ratelimit.filters.edge.limit=10",
				"ratelimit.filters.edge.window=1s", "ratelimit.filters.edge.policies=acount");
	}

	@Test
	void filterKeyThatDoesNotParse() {
		assertPropertiesFail("ratelimit.filters.edge: 'key' is not a valid SpEL expression '#request.('",
				"ratelimit.filters.edge.paths=/api/**", "ratelimit.filters.edge.limit=10",
				"ratelimit.filters.edge.window=1s", "ratelimit.filters.edge.key=#request.(");
	}

	@Test
	void sharedPolicyThatNothingDraws() {
		assertPropertiesFail("ratelimit.policies.acount does not match any @RateLimited policy. Known policies: valid. "
				+ "A shared policy is drawn by @RateLimited(name = \"acount\") or a filter's 'policies'; this one is "
				+ "drawn by none.", "ratelimit.policies.acount.limit=5", "ratelimit.policies.acount.window=1s");
	}

	@Test
	void planChangingAPolicyThatIsNotDeclared() {
		assertPropertiesFail("ratelimit.plans.pro.vaild does not match any policy. Known policies: valid.",
				"ratelimit.plans.pro.vaild.limit=100");
	}

	@Test
	void planWithALimitBelowOne() {
		assertPropertiesFail("@RateLimited on Valid#get(String): 'limit' must be at least 1 but was 0 (from "
				+ "ratelimit.plans.pro.valid)", "ratelimit.plans.pro.valid.limit=0");
	}

	@Test
	void defaultPlanThatIsNotAPlan() {
		assertPropertiesFail("ratelimit.default-plan 'gold' is not a plan under ratelimit.plans. Known plans: "
				+ "pro.", "ratelimit.plans.pro.valid.limit=100", "ratelimit.default-plan=gold");
	}

	@Test
	void exemptEntryThatIsNotANetwork() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.client-ip.exempt=10.0.0.0/8,localhost")
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("'localhost' is not an IP address or a CIDR block"));
	}

	private void assertPropertiesFail(String messageStart, String... properties) {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues(properties)
			.run((context) -> assertThat(findCause(context.getStartupFailure()).getMessage()).startsWith(messageStart));
	}

	@Test
	void limitNotSetAnywhere() {
		assertFailsWith(NoLimit.class, "@RateLimited on NoLimit#list(): 'limit' is not set; set it on the annotation "
				+ "or with 'ratelimit.policies.[NoLimit.list].limit'");
	}

	@Test
	void unparseableWindow() {
		assertFailsWith(BadWindow.class, "@RateLimited on BadWindow#list(): 'window' must be a duration such as 500ms, "
				+ "30s, 1m, 1h, 1d or PT1M but was '5 minutes'");
	}

	@Test
	void aZoneOnAWindowThatIsNoCalendarWindow() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.valid.zone=Europe/Berlin")
			.run((context) -> assertThat(findCause(context.getStartupFailure())).hasMessageEndingWith(
					"'zone' Europe/Berlin applies to a calendar window (1d, 1w or 1M), not to '1m' (from "
							+ "ratelimit.policies.valid.zone)"));
	}

	@Test
	void monthsOtherThanOneAndCalendarWindowsOfABucket() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.valid.window=5M")
			.run((context) -> assertThat(findCause(context.getStartupFailure())).hasMessageContaining(
					"'window' '5M' is not a window: an upper-case M is a calendar month, and a calendar window is 1M; "
							+ "write minutes with a lower-case m (from ratelimit.policies.valid.window)"));
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.valid.window=1M", "ratelimit.policies.valid.algorithm=token-bucket")
			.run((context) -> assertThat(findCause(context.getStartupFailure())).hasMessageContaining(
					"A calendar window ('1M in UTC') applies to FIXED and SLIDING_COUNTER only, not to TOKEN_BUCKET"));
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.valid.window=1w", "ratelimit.policies.valid.zone=Mars/Olympus")
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("Mars/Olympus"));
	}

	@Test
	void windowWithoutAUnit() {
		assertFailsWith(UnitlessWindow.class, "@RateLimited on UnitlessWindow#list(): 'window' must have a unit "
				+ "(ms, s, m, h, d) or be ISO-8601 (PT1M) but was '60'");
	}

	@Test
	void nonPositiveWindow() {
		assertFailsWith(ZeroWindow.class,
				"@RateLimited on ZeroWindow#list(): 'window' must be a positive duration but was '0s'");
	}

	@Test
	void windowBelowOneMillisecond() {
		assertFailsWith(TinyWindow.class,
				"@RateLimited on TinyWindow#list(): 'window' must be at least 1ms but was 'PT0.0005S'");
	}

	@Test
	void windowSoLargeThatArithmeticWouldOverflow() {
		assertFailsWith(HugeWindow.class, "@RateLimited on HugeWindow#list(): 'window' must be at most "
				+ "1125899906842624ms (arithmetic would overflow) but was '100000000d'");
	}

	@Test
	void limitAndWindowTooLargeForExactArithmetic() {
		assertFailsWith(HugeCounter.class, "@RateLimited on HugeCounter#list(): 'limit' × 'window' is too large for "
				+ "exact arithmetic with SLIDING_COUNTER (limit 1000000000000, window '1d'): limit × window in "
				+ "milliseconds must stay below 2^51; use a shorter window or a smaller limit");
	}

	@Test
	void burstBelowOne() {
		assertFailsWith(ZeroBurst.class, "@RateLimited on ZeroBurst#list(): 'burst' must be at least 1 but was 0");
	}

	@Test
	void constantCostAboveTheLimit() {
		assertFailsWith(CostAboveLimit.class, "@RateLimited on CostAboveLimit#list(): 'cost' of 11 exceeds the limit "
				+ "of 10, so no request could ever pass");
	}

	@Test
	void constantCostBelowOne() {
		assertFailsWith(ZeroCost.class, "@RateLimited on ZeroCost#list(): 'cost' must be at least 1 but was 0");
	}

	@Test
	void keyThatIsNotValidSpel() {
		this.runner.withUserConfiguration(BadKey.class)
			.run((context) -> assertThat(findCause(context.getStartupFailure()))
				.hasMessageStartingWith("@RateLimited on BadKey#get(String): 'key' is not a valid SpEL expression "
						+ "'#userId +': "));
	}

	@Test
	void costThatIsNotValidSpel() {
		this.runner.withUserConfiguration(BadCost.class)
			.run((context) -> assertThat(findCause(context.getStartupFailure()))
				.hasMessageStartingWith("@RateLimited on BadCost#list(): 'cost' is not a valid SpEL expression "
						+ "'#request.getHeader(': "));
	}

	@Test
	void unknownPolicyUnderRatelimitPolicies() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.vaild.limit=5")
			.run((context) -> assertThat(findCause(context.getStartupFailure()))
				.hasMessage("ratelimit.policies.vaild does not match any @RateLimited policy. Known policies: valid."));
	}

	@Test
	void samePolicyNameTwiceOnOneMethod() {
		assertFailsWith(DuplicateNames.class, "@RateLimited on DuplicateNames#list(): policy 'twice' is declared more "
				+ "than once on this method; give each @RateLimited a distinct name");
	}

	@Test
	void samePolicyNameWithDifferentSettingsOnTwoMethods() {
		this.runner.withUserConfiguration(ConflictingSettings.class)
			.run((context) -> assertThat(findCause(context.getStartupFailure()))
				.hasMessageContaining("policy 'shared' is also declared by ConflictingSettings#")
				.hasMessageMatching(".*with different settings \\(FIXED (10|20) per 1m there, FIXED (10|20) per 1m here\\).*"));
	}

	@Test
	void samePolicyNameWithTheSameSettingsSharesCounters() {
		this.runner.withUserConfiguration(SharedSettings.class).run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void unparseableWindowPropertyIsReportedByProperty() {
		this.runner.withUserConfiguration(Valid.class)
			.withPropertyValues("ratelimit.policies.valid.window=soon")
			.run((context) -> assertThat(findCause(context.getStartupFailure())).hasMessage("@RateLimited on "
					+ "Valid#get(String): 'window' must be a duration such as 500ms, 30s, 1m, 1h, 1d or PT1M but was "
					+ "'soon' (from ratelimit.policies.valid.window)"));
	}

	@Test
	void theFailureAnalysisSaysWhatToDo() {
		this.runner.withUserConfiguration(ZeroLimit.class).run((context) -> {
			Throwable failure = context.getStartupFailure();
			InvalidRateLimitPolicyException cause = findCause(failure);
			FailureAnalysis analysis = new InvalidRateLimitPolicyFailureAnalyzer().analyze(failure);
			assertThat(analysis.getDescription()).isEqualTo(cause.getMessage());
			assertThat(analysis.getAction()).isEqualTo("Fix the @RateLimited attribute, or set the value under "
					+ "'ratelimit.policies.[ZeroLimit.list]' in your configuration.");
		});
	}

	private static InvalidRateLimitPolicyException findCause(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof InvalidRateLimitPolicyException invalid) {
				return invalid;
			}
		}
		throw new AssertionError("no InvalidRateLimitPolicyException in " + failure);
	}

	@Test
	void keyThatIsAParameterWithoutValueBasedText() {
		assertFailsWith(ArrayKey.class, "@RateLimited on ArrayKey#list(String[]): 'key' #ids is a java.lang.String[], "
				+ "whose text is not its value; a key must be text, a number, a UUID, an enum, a Boolean, an InetAddress "
				+ "or a Principal (name a property of it, such as #ids.id)");
	}

	@Test
	void rateLimitedMethodsThatCallsCannotBeInterceptedOnFailStartUp() {
		assertFailsWith(StaticMethod.class, "@RateLimited on StaticMethod#helper(): the method is static, so calls to it "
				+ "never pass through the proxy that limits them; make it a non-static method of the bean, called from "
				+ "outside it");
		assertFailsWith(PrivateMethod.class, "@RateLimited on PrivateMethod#helper(): the method is private, so calls "
				+ "to it never pass through the proxy that limits them; make it a non-private method of the bean, "
				+ "called from outside it");
		assertFailsWith(FinalMethod.class, "@RateLimited on FinalMethod#list(): the method is final, so calls to it "
				+ "never pass through the proxy that limits them; make it a non-final method of the bean, called from "
				+ "outside it");
	}

	private void assertFailsWith(Class<?> controller, String message) {
		this.runner.withUserConfiguration(controller)
			.run((context) -> assertThat(findCause(context.getStartupFailure())).hasMessage(message));
	}

	@RestController
	static class Valid {

		@RateLimited(name = "valid", limit = 10, window = "1m", key = "#id")
		@GetMapping("/valid/{id}")
		String get(@PathVariable String id) {
			return id;
		}

	}

	@RestController
	static class StaticMethod {

		@GetMapping("/static")
		String list() {
			return helper();
		}

		@RateLimited(limit = 1, window = "1m")
		static String helper() {
			return "";
		}

	}

	@RestController
	static class PrivateMethod {

		@GetMapping("/private")
		String list() {
			return helper();
		}

		@RateLimited(limit = 1, window = "1m")
		private String helper() {
			return "";
		}

	}

	@RestController
	static class FinalMethod {

		@RateLimited(limit = 1, window = "1m")
		@GetMapping("/final")
		final String list() {
			return "";
		}

	}

	@RestController
	static class ArrayKey {

		@RateLimited(limit = 1, window = "1m", key = "#ids")
		@GetMapping("/array-key")
		String list(@org.springframework.web.bind.annotation.RequestParam String[] ids) {
			return "";
		}

	}

	@RestController
	static class ZeroLimit {

		@RateLimited(limit = 0, window = "1m")
		@GetMapping("/zero-limit")
		String list() {
			return "";
		}

	}

	@RestController
	static class NoLimit {

		@RateLimited(window = "1m")
		@GetMapping("/no-limit")
		String list() {
			return "";
		}

	}

	@RestController
	static class BadWindow {

		@RateLimited(limit = 1, window = "5 minutes")
		@GetMapping("/bad-window")
		String list() {
			return "";
		}

	}

	@RestController
	static class UnitlessWindow {

		@RateLimited(limit = 1, window = "60")
		@GetMapping("/unitless-window")
		String list() {
			return "";
		}

	}

	@RestController
	static class ZeroWindow {

		@RateLimited(limit = 1, window = "0s")
		@GetMapping("/zero-window")
		String list() {
			return "";
		}

	}

	@RestController
	static class TinyWindow {

		@RateLimited(limit = 1, window = "PT0.0005S")
		@GetMapping("/tiny-window")
		String list() {
			return "";
		}

	}

	@RestController
	static class HugeWindow {

		@RateLimited(limit = 1, window = "100000000d")
		@GetMapping("/huge-window")
		String list() {
			return "";
		}

	}

	@RestController
	static class HugeCounter {

		@RateLimited(limit = 1_000_000_000_000L, window = "1d", algorithm = Algorithm.SLIDING_COUNTER)
		@GetMapping("/huge-counter")
		String list() {
			return "";
		}

	}

	@RestController
	static class ZeroBurst {

		@RateLimited(limit = 1, window = "1m", algorithm = Algorithm.TOKEN_BUCKET, burst = 0)
		@GetMapping("/zero-burst")
		String list() {
			return "";
		}

	}

	@RestController
	static class CostAboveLimit {

		@RateLimited(limit = 10, window = "1m", cost = "11")
		@GetMapping("/cost-above-limit")
		String list() {
			return "";
		}

	}

	@RestController
	static class ZeroCost {

		@RateLimited(limit = 10, window = "1m", cost = "0")
		@GetMapping("/zero-cost")
		String list() {
			return "";
		}

	}

	@RestController
	static class BadKey {

		@RateLimited(limit = 10, window = "1m", key = "#userId +")
		@GetMapping("/bad-key/{userId}")
		String get(@PathVariable String userId) {
			return "";
		}

	}

	@RestController
	static class BadCost {

		@RateLimited(limit = 10, window = "1m", cost = "#request.getHeader(")
		@GetMapping("/bad-cost")
		String list() {
			return "";
		}

	}

	@RestController
	static class DuplicateNames {

		@RateLimited(name = "twice", limit = 10, window = "1m")
		@RateLimited(name = "twice", limit = 20, window = "1h")
		@GetMapping("/duplicate-names")
		String list() {
			return "";
		}

	}

	@RestController
	static class ConflictingSettings {

		@RateLimited(name = "shared", limit = 10, window = "1m")
		@GetMapping("/conflicting/a")
		String a() {
			return "";
		}

		@RateLimited(name = "shared", limit = 20, window = "1m")
		@GetMapping("/conflicting/b")
		String b() {
			return "";
		}

	}

	@RestController
	static class SharedSettings {

		@RateLimited(name = "shared", limit = 10, window = "1m")
		@GetMapping("/shared/a")
		String a() {
			return "";
		}

		@RateLimited(name = "shared", limit = 10, window = "60s")
		@GetMapping("/shared/b")
		String b() {
			return "";
		}

	}

}
