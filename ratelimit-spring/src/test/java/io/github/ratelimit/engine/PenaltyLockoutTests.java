package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.web.MockRateLimitRequest;
import io.github.ratelimit.web.RateLimitExceededException;
import io.github.ratelimit.web.RateLimitLockedOutException;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.http.ResponseEntity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Lock-outs after abuse ({@code penalty}, {@code penalty-group}): a key that breaks a policy with a penalty is
 * rejected by every policy of its group until the penalty has passed, whatever it does meanwhile.
 */
class PenaltyLockoutTests {

	private static final String CLIENT = "198.51.100.7";

	final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:30Z");

	final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(this.clock).build();

	final RateLimitEngine engine = engine();

	@Test
	void aKeyThatBreaksAPolicyWithAPenaltyIsLockedOutForThePenaltyNotForTheWindow() {
		for (int i = 0; i < 3; i++) {
			assertThat(call("search", CLIENT).isRejected()).isFalse();
		}
		RateLimitOutcome broke = call("search", CLIENT);
		assertThat(broke.rejection()).isInstanceOf(RateLimitLockedOutException.class);
		assertThat(broke.rejection().getBody().getType().toString()).endsWith("#abnormal-usage-detected");
		assertThat(broke.headers().getFirst("Retry-After")).isEqualTo("3600");
		assertThat(broke.headers().getFirst("RateLimit-Remaining")).isEqualTo("0");
		assertThat(broke.headers().getFirst("RateLimit-Reset")).isEqualTo("3600");
		this.clock.advance(Duration.ofMinutes(2));
		RateLimitOutcome stillLocked = call("search", CLIENT);
		assertThat(stillLocked.rejection()).as("the window has passed, the penalty has not")
			.isInstanceOf(RateLimitLockedOutException.class);
		assertThat(stillLocked.headers().getFirst("Retry-After")).isEqualTo("3480");
		assertThat(call("search", "198.51.100.8").isRejected()).as("another key").isFalse();
		this.clock.advance(Duration.ofMinutes(58).minusMillis(1));
		assertThat(call("search", CLIENT).isRejected()).isTrue();
		this.clock.advance(Duration.ofMillis(1));
		assertThat(call("search", CLIENT).isRejected()).as("an hour after the break").isFalse();
	}

	@Test
	void aLockedOutKeysRequestsTakeNothingFromItsPolicies() {
		for (int i = 0; i < 4; i++) {
			call("search", CLIENT);
		}
		this.clock.advance(Duration.ofMinutes(1));
		for (int i = 0; i < 10; i++) {
			assertThat(call("search", CLIENT).rejection()).isInstanceOf(RateLimitLockedOutException.class);
		}
		assertThat(this.store.peek(policy("search"), CLIENT).remaining()).isEqualTo(3);
	}

	@Test
	void theCountedFailureThatUsesTheLastUnitLocksTheKeyOutOfItsWholeGroup() throws Exception {
		assertThat(login(CLIENT, false)).isEqualTo(401);
		assertThat(login(CLIENT, true)).as("a success is given back").isEqualTo(200);
		assertThat(call("reset-password", CLIENT).isRejected()).isFalse();
		assertThat(login(CLIENT, false)).as("the second failure uses the last unit").isEqualTo(401);
		RateLimitOutcome right = callMethod("login", CLIENT, true);
		assertThat(right.rejection()).as("the right password, locked out").isInstanceOf(RateLimitLockedOutException.class);
		assertThat(((RateLimitLockedOutException) right.rejection()).getRetryAfterSeconds()).isEqualTo(3600);
		RateLimitOutcome otherPolicy = call("reset-password", CLIENT);
		assertThat(otherPolicy.rejection()).as("a policy of the same group").isInstanceOf(RateLimitLockedOutException.class);
		assertThat(otherPolicy.rejection().getBody().getDetail()).contains("'reset-password'");
		assertThat(call("reset-password", "198.51.100.8").isRejected()).isFalse();
		assertThat(call("search", CLIENT).isRejected()).as("a policy of another group").isFalse();
	}

	@Test
	void aFailureCountedWhileASuccessWasInFlightLocksOutOnlyIfTheSuccessDidNotGiveItsUnitBack() throws Exception {
		Method login = Api.class.getMethod("login", boolean.class);
		MockRateLimitRequest success = new MockRateLimitRequest().setRemoteAddr(CLIENT);
		RateLimitOutcome succeeding = decideMethod(login, new Object[] { true }, success);
		MockRateLimitRequest failure = new MockRateLimitRequest().setRemoteAddr(CLIENT);
		RateLimitOutcome failing = decideMethod(login, new Object[] { false }, failure);
		assertThat(failing.limits().get(0).decision().remaining()).as("the success's unit still held").isZero();
		settle(succeeding, success, login, ResponseEntity.ok("welcome"));
		settle(failing, failure, login, ResponseEntity.status(401).build());
		assertThat(login(CLIENT, true)).as("one failure of two: not locked out").isEqualTo(200);
		assertThat(login(CLIENT, false)).isEqualTo(401);
		assertThat(callMethod("login", CLIENT, true).rejection()).isInstanceOf(RateLimitLockedOutException.class);
	}

	@Test
	void aUserNamedLikeAnAddressLocksNoAddressOut() {
		for (int i = 0; i < 2; i++) {
			assertThat(call("byUser", CLIENT).isRejected()).as("user '%s'", CLIENT).isFalse();
		}
		assertThat(call("byUser", CLIENT).rejection()).isInstanceOf(RateLimitLockedOutException.class);
		assertThat(call("byAddress", CLIENT).isRejected()).as("the address the user is named like").isFalse();
	}

	@Test
	void whenThePolicysOwnRejectionLastsLongerThanTheLockOutItIsAnswered() {
		assertThat(call("daily", CLIENT).isRejected()).isFalse();
		RateLimitOutcome rejected = call("daily", CLIENT);
		assertThat(rejected.rejection()).isExactlyInstanceOf(RateLimitExceededException.class);
		assertThat(rejected.headers().getFirst("Retry-After")).isEqualTo(Long.toString(24 * 3600 - 30));
	}

	@Test
	void aPenaltyOnAKeyEveryClientSharesOrWithALeaseFailsTheStartUp() {
		PolicyCatalog shared = PolicyCatalog.builder().build();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class).isThrownBy(() -> shared.register(Everyone.class))
			.withMessageContaining("'penalty' needs a key per client")
			.withMessageContaining("one break would lock every client out");
		PolicyCatalog leased = PolicyCatalog.builder().build();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class).isThrownBy(() -> leased.register(Leased.class))
			.withMessageContaining("'lease' cannot apply with 'penalty-group'");
	}

	@Test
	void aPolicyWithoutAPenaltyRejectsAsItAlwaysDid() {
		for (int i = 0; i < 2; i++) {
			call("plain", CLIENT);
		}
		RateLimitOutcome rejected = call("plain", CLIENT);
		assertThat(rejected.rejection()).isExactlyInstanceOf(RateLimitExceededException.class);
		assertThat(rejected.headers().getFirst("Retry-After")).isEqualTo("30");
	}

	@Test
	void anOperatorUnlocksAKeyAndTheListShowsWhoIsLockedOutUntilWhen() {
		for (int i = 0; i < 4; i++) {
			call("search", CLIENT);
		}
		assertThat(this.engine.lockouts().lockedOut()).containsExactly(new RateLimitLockouts.LockedOut("search", "search",
				CLIENT, this.clock.currentTimeMillis() + 3_600_000));
		PolicySpec search = this.engine.catalog().policy("search");
		this.clock.advance(Duration.ofMinutes(1));
		this.engine.lockouts().unlock(search, CLIENT);
		assertThat(this.engine.lockouts().lockedOut()).isEmpty();
		assertThat(call("search", CLIENT).isRejected()).isFalse();
	}

	@Test
	void twoLockOutsOfOneKeyAtOnceLockItOutForOnePenalty() {
		PolicySpec search = this.engine.catalog().policy("search");
		RateLimitLockouts lockouts = this.engine.lockouts();
		assertThat(lockouts.lock(search, CLIENT)).isEqualTo(3_600_000);
		this.clock.advance(Duration.ofMillis(1));
		assertThat(lockouts.lock(search, CLIENT)).as("the other instance's, a millisecond later")
			.isBetween(3_599_000L, 3_600_000L);
		this.clock.advance(Duration.ofHours(1));
		assertThat(call("search", CLIENT).isRejected()).isFalse();
	}

	@Test
	void aPenaltyThatIsNoDurationOrLastsLongerThanAMonthFailsNamingTheProperty() {
		for (String penalty : List.of("forever", "0s", "32d")) {
			PolicyCatalog catalog = PolicyCatalog.builder()
				.policies(Map.of("search", values("ratelimit.policies.search", "penalty", penalty)))
				.build();
			assertThatExceptionOfType(InvalidRateLimitPolicyException.class).isThrownBy(() -> catalog.register(Api.class))
				.withMessageContaining("'penalty' must be a duration of at least 1ms and at most 31 days")
				.withMessageContaining("'" + penalty + "'")
				.withMessageContaining("(from ratelimit.policies.search.penalty)");
		}
		PolicyCatalog reserved = PolicyCatalog.builder().build();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> reserved.register(ReservedName.class))
			.withMessageContaining("cannot start with '#'");
	}

	RateLimitOutcome call(String method, String client) {
		try {
			return switch (method) {
				case "reset-password" -> callMethod("resetPassword", client);
				case "byUser" -> callMethod(method, "198.51.100.99", client);
				default -> callMethod(method, client);
			};
		}
		catch (NoSuchMethodException ex) {
			throw new IllegalStateException(ex);
		}
	}

	RateLimitOutcome callMethod(String name, String client, Object... arguments) throws NoSuchMethodException {
		for (Method method : Api.class.getMethods()) {
			if (method.getName().equals(name)) {
				RateLimitOutcome outcome = decideMethod(method, arguments, new MockRateLimitRequest().setRemoteAddr(client));
				assertThat(outcome).isNotNull();
				return outcome;
			}
		}
		throw new NoSuchMethodException(name);
	}

	/** A login's status: 429 if rejected, else the method's, settled. */
	private int login(String client, boolean ok) throws Exception {
		Method login = Api.class.getMethod("login", boolean.class);
		MockRateLimitRequest request = new MockRateLimitRequest().setRemoteAddr(client);
		RateLimitOutcome outcome = decideMethod(login, new Object[] { ok }, request);
		if (outcome.isRejected()) {
			return 429;
		}
		ResponseEntity<String> response = new Api().login(ok);
		settle(outcome, request, login, response);
		return response.getStatusCode().value();
	}

	@Nullable RateLimitOutcome decideMethod(Method method, Object[] arguments, MockRateLimitRequest request) {
		return this.engine.decideMethod(method, Api.class, arguments, request);
	}

	void settle(RateLimitOutcome outcome, MockRateLimitRequest request, Method method, Object result) {
		this.engine.settlement().settle(outcome, request, method, result, null);
	}

	private io.github.ratelimit.RateLimitPolicy policy(String name) {
		PolicySpec spec = this.engine.catalog().policy(name);
		assertThat(spec).isNotNull();
		return spec.policy();
	}

	private RateLimitEngine engine() {
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		catalog.register(Api.class);
		return RateLimitEngine
			.builder(catalog, RateLimiter.builder(this.store).clock(this.clock).build(),
					new StandardRateLimitHeadersWriter(), (request) -> String.valueOf(request.getRemoteAddr()))
			.build();
	}

	private static PolicyValues values(String source, Object... namesAndValues) {
		Map<String, Object> values = new LinkedHashMap<>();
		for (int i = 0; i < namesAndValues.length; i += 2) {
			values.put((String) namesAndValues[i], namesAndValues[i + 1]);
		}
		return new PolicyValues(source, values);
	}

	public static class Api {

		@RateLimited(name = "search", limit = 3, window = "1m", penalty = "1h")
		public String search() {
			return "found";
		}

		@RateLimited(name = "login", limit = 2, window = "15m", countOn = "401", penalty = "1h",
				penaltyGroup = "auth")
		public ResponseEntity<String> login(boolean ok) {
			return ok ? ResponseEntity.ok("welcome") : ResponseEntity.status(401).build();
		}

		@RateLimited(name = "reset-password", limit = 100, window = "1m", penaltyGroup = "auth")
		public String resetPassword() {
			return "sent";
		}

		@RateLimited(name = "plain", limit = 2, window = "1m")
		public String plain() {
			return "plain";
		}

		@RateLimited(name = "byUser", limit = 2, window = "1m", key = "#user", penalty = "1h", penaltyGroup = "mixed")
		public String byUser(String user) {
			return "user";
		}

		@RateLimited(name = "byAddress", limit = 100, window = "1m", penaltyGroup = "mixed")
		public String byAddress() {
			return "address";
		}

		@RateLimited(name = "daily", limit = 1, window = "1d", penalty = "1h")
		public String daily() {
			return "daily";
		}

	}

	public static class Everyone {

		@RateLimited(name = "everyone", limit = 1, window = "1m", key = "'all'", penalty = "1h")
		public String everyone() {
			return "everyone";
		}

	}

	public static class Leased {

		@RateLimited(name = "leased", limit = 100, window = "1m", lease = "10", penaltyGroup = "auth")
		public String leased() {
			return "leased";
		}

	}

	public static class ReservedName {

		@RateLimited(name = "#penalty:search", limit = 1, window = "1m")
		public String sneaky() {
			return "sneaky";
		}

	}

}
