package io.github.ratelimit.samples;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import io.github.ratelimit.samples.SampleApp.Stack;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract of the samples' rate limited routes, which every stack keeps: {@code GET /api/v1/resources}, 5 a
 * minute per client address, and {@code GET /api/v1/users/{userId}/orders}, 10 a minute per user; the headers in
 * each style, the 429 problem and {@code Retry-After}; the client's address behind a trusted proxy; shadow mode; the
 * {@code ratelimits} endpoint. A subclass per stack starts its packaged sample twice for the whole class, and each
 * test keeps to client addresses and users of its own, so that tests share the instances without sharing counts:
 * <ul>
 * <li>{@link #sample}: as configured, behind a proxy on this machine that it trusts ({@code X-Forwarded-For});</li>
 * <li>{@link #tuned}: the same with every header style at once, and {@code orders} in shadow mode.</li>
 * </ul>
 * The sample's windows are the real clock's: a test of a fixed window first waits until the window's end is not
 * near, rather than assert anything about time. Each request has a connection of its own: Reactor Netty 1.3.6
 * (Spring Boot 4.0.7) can leave a keep-alive connection unread (docs/web-stacks.md, "On WebFlux"), which is not this contract.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RateLimitedRoutesContract {

	static final String PROBLEM_TYPE = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/** Addresses of the benchmarking block 198.18.0.0/15, a new one each time: no two tests share one. */
	private static final AtomicInteger addresses = new AtomicInteger(1);

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	/** The sample as configured, trusting 127.0.0.1 as its proxy. */
	SampleApp sample;

	/** The sample with every header style at once, and {@code orders} in shadow mode. */
	SampleApp tuned;

	/** The secret of the fingerprints both samples show keys as. */
	static final String FINGERPRINT_SECRET = "contract-fingerprints";

	/** The stack under test. */
	abstract Stack stack();

	/** Arguments of this stack's own for both instances, such as the gateway's upstream. */
	abstract List<String> stackArgs();

	/** The sample's handler methods that no limit covers, as the endpoint lists them: none, unless said. */
	List<String> unlimitedHandlers() {
		return List.of();
	}

	/** Arguments of this stack's own for {@link #sample}. */
	List<String> sampleArgs() {
		return List.of();
	}

	/** Arguments of this stack's own for {@link #tuned}. */
	List<String> tunedArgs() {
		return List.of();
	}

	@BeforeAll
	void startSamples() {
		List<String> common = new ArrayList<>(List.of("--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1",
				"--management.endpoints.web.exposure.include=health,metrics,ratelimits",
				// Known here, so that the contract can tell which fingerprint the endpoint shows for its clients.
				"--ratelimit.heavy-hitters.secret=" + FINGERPRINT_SECRET,
				// Nothing listens on port 1: in memory, the samples must not depend on a Redis this machine runs.
				"--spring.data.redis.port=1"));
		common.addAll(stackArgs());
		List<String> tuned = new ArrayList<>(common);
		tuned.addAll(List.of("--ratelimit.headers.style=draft-6,draft-11,x-ratelimit",
				"--ratelimit.policies.orders.mode=shadow"));
		// Both at once: a JVM starting up waits on its disk part of the time.
		ExecutorService starting = Executors.newFixedThreadPool(2);
		try {
			Future<SampleApp> sample = starting.submit(() -> SampleApp.start(stack(), concat(common, sampleArgs())));
			Future<SampleApp> tunedSample = starting.submit(() -> SampleApp.start(stack(), concat(tuned, tunedArgs())));
			// Each kept once it answers, so that @AfterAll stops it even if the other failed to start.
			RuntimeException failure = null;
			try {
				this.sample = started(sample);
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
			try {
				this.tuned = started(tunedSample);
			}
			catch (RuntimeException ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
			if (failure != null) {
				throw failure;
			}
		}
		finally {
			starting.shutdown();
		}
	}

	private static SampleApp started(Future<SampleApp> start) {
		try {
			return start.get();
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof RuntimeException failure) ? failure : new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@AfterAll
	void stopSamples() {
		for (SampleApp app : new SampleApp[] { this.sample, this.tuned }) {
			if (app != null) {
				app.close();
			}
		}
	}

	@Test
	void theStartUpLogSaysOnceWhatIsLimitedAndByHowManyPolicies() {
		List<String> lines = this.sample.log().lines().filter((line) -> line.contains("Rate limits: ")).toList();
		assertThat(lines).singleElement()
			.asString()
			.contains("INFO")
			.containsPattern("Rate limits: (\\d+ methods?)?(, )?(( and )?\\d+ filters?)?(( and )?\\d+ gateway routes?)? "
					+ "limited by \\d+ polic(y|ies)")
			.contains((stack() == Stack.GATEWAY) ? " gateway route" : " method");
	}

	@Test
	void resourcesAdmitFiveAMinutePerClientAddressThenAnswerTheProblemWithRetryAfter() throws Exception {
		awayFromTheEndOfAWindowOf(Duration.ofMinutes(1));
		String address = newAddress();
		long reset = 0;
		for (int remaining = 4; remaining >= 0; remaining--) {
			HttpResponse<String> admitted = get(this.sample, "/api/v1/resources", address);
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.body()).contains("\"status\":\"success\"");
			assertThat(admitted.headers().allValues("RateLimit-Limit")).as("set once").containsExactly("5");
			assertThat(admitted.headers().allValues("RateLimit-Remaining")).containsExactly(Integer.toString(remaining));
			reset = Long.parseLong(header(admitted, "RateLimit-Reset"));
			assertThat(reset).isBetween(1L, 60L);
		}
		HttpResponse<String> rejected = get(this.sample, "/api/v1/resources", address);
		long retryAfter = assertProblem(rejected, "resources", "/api/v1/resources", Duration.ofMinutes(1));
		assertThat(header(rejected, "RateLimit-Limit")).isEqualTo("5");
		assertThat(header(rejected, "RateLimit-Remaining")).isEqualTo("0");
		assertThat(Long.parseLong(header(rejected, "RateLimit-Reset"))).as("a fixed window's end, for both")
			.isEqualTo(retryAfter)
			.isLessThanOrEqualTo(reset);
		assertThat(get(this.sample, "/api/v1/resources", newAddress()).statusCode()).as("another address")
			.isEqualTo(200);
	}

	@Test
	void ordersAdmitTenAMinutePerUserWhateverTheAddress() throws Exception {
		awayFromTheEndOfAWindowOf(Duration.ofMinutes(1));
		String user = newUser();
		for (int i = 0; i < 10; i++) {
			HttpResponse<String> admitted = get(this.sample, "/api/v1/users/" + user + "/orders", newAddress());
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(header(admitted, "RateLimit-Remaining")).isEqualTo(Integer.toString(9 - i));
		}
		assertProblem(get(this.sample, "/api/v1/users/" + user + "/orders", newAddress()), "orders",
				"/api/v1/users/" + user + "/orders", Duration.ofMinutes(1));
		HttpResponse<String> anotherUser = get(this.sample, "/api/v1/users/" + newUser() + "/orders", newAddress());
		assertThat(anotherUser.statusCode()).isEqualTo(200);
		assertThat(header(anotherUser, "RateLimit-Remaining")).isEqualTo("9");
	}

	@Test
	void behindTheTrustedProxyTheAddressItSawIsTheKeyWhateverTheClientWroteBeforeIt() throws Exception {
		awayFromTheEndOfAWindowOf(Duration.ofMinutes(1));
		String address = newAddress();
		for (int i = 0; i < 5; i++) {
			assertThat(get(this.sample, "/api/v1/resources", newAddress() + ", " + address).statusCode())
				.isEqualTo(200);
		}
		assertThat(get(this.sample, "/api/v1/resources", newAddress() + ", " + address).statusCode()).isEqualTo(429);
		assertThat(get(this.sample, "/api/v1/resources", address + ", " + newAddress()).statusCode())
			.as("another client, forwarded by the same proxy")
			.isEqualTo(200);
	}

	@Test
	void everyHeaderStyleTellsTheSameLimitRemainingAndReset() throws Exception {
		awayFromTheEndOfAWindowOf(Duration.ofMinutes(1));
		String address = newAddress();
		HttpResponse<String> admitted = get(this.tuned, "/api/v1/resources", address);
		assertThat(admitted.statusCode()).isEqualTo(200);
		String reset = header(admitted, "RateLimit-Reset");
		assertThat(header(admitted, "RateLimit-Limit")).isEqualTo("5");
		assertThat(header(admitted, "RateLimit-Remaining")).isEqualTo("4");
		assertThat(header(admitted, "X-RateLimit-Limit")).isEqualTo("5");
		assertThat(header(admitted, "X-RateLimit-Remaining")).isEqualTo("4");
		assertThat(header(admitted, "X-RateLimit-Reset")).as("delta seconds, as RateLimit-Reset").isEqualTo(reset);
		assertThat(item(header(admitted, "RateLimit-Policy"), "resources")).hasValue("\"resources\";q=5;w=60");
		assertThat(item(header(admitted, "RateLimit"), "resources")).hasValueSatisfying((item) -> {
			assertThat(item).startsWith("\"resources\";r=4;t=");
			assertThat(Long.parseLong(item.substring(item.indexOf(";t=") + 3))).as("t, the effective window")
				.isBetween(0L, Long.parseLong(reset));
		});
		assertThat(admitted.headers().firstValue("Retry-After")).as("only on a rejection").isEmpty();
		for (int i = 0; i < 4; i++) {
			assertThat(get(this.tuned, "/api/v1/resources", address).statusCode()).isEqualTo(200);
		}
		HttpResponse<String> rejected = get(this.tuned, "/api/v1/resources", address);
		long retryAfter = assertProblem(rejected, "resources", "/api/v1/resources", Duration.ofMinutes(1));
		assertThat(header(rejected, "RateLimit-Remaining")).isEqualTo("0");
		assertThat(header(rejected, "X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(header(rejected, "X-RateLimit-Reset")).isEqualTo(header(rejected, "RateLimit-Reset"));
		assertThat(header(rejected, "RateLimit-Policy")).as("the policy that rejected it first")
			.startsWith("\"resources\";q=5;w=60");
		String rateLimit = header(rejected, "RateLimit");
		assertThat(rateLimit).startsWith("\"resources\";r=0;t=");
		assertThat(Long.parseLong(item(rateLimit, "resources").orElseThrow().replaceFirst(".*;t=", "")))
			.as("never more than Retry-After")
			.isBetween(0L, retryAfter);
	}

	@Test
	void aPolicyInShadowModeLetsEveryRequestPassShowsNoHeadersAndCountsWhatItWouldHaveRejected() throws Exception {
		awayFromTheEndOfAWindowOf(Duration.ofMinutes(1));
		String user = newUser();
		for (int i = 0; i < 12; i++) {
			HttpResponse<String> passed = get(this.tuned, "/api/v1/users/" + user + "/orders", newAddress());
			assertThat(passed.statusCode()).as("request %d of a limit of 10", i + 1).isEqualTo(200);
			assertThat(passed.headers().firstValue("Retry-After")).isEmpty();
			assertThat(passed.headers().firstValue("RateLimit-Policy").orElse("")).doesNotContain("orders");
			assertThat(passed.headers().firstValue("RateLimit").orElse("")).doesNotContain("orders");
		}
		assertThat(meter(this.tuned, "ratelimit.shadow.rejections", "policy:orders")).isEqualTo(2);
		assertThat(meter(this.tuned, "ratelimit.decisions", "policy:orders", "outcome:shadow_rejected")).isEqualTo(2);
		assertThat(meter(this.tuned, "ratelimit.decisions", "policy:orders", "outcome:allowed")).isEqualTo(10);
	}

	@Test
	void theRateLimitsEndpointListsThePoliciesAndReadsAKeyWithoutTakingAUnit() throws Exception {
		HttpResponse<String> all = get(this.sample, "/actuator/ratelimits", newAddress());
		assertThat(all.statusCode()).isEqualTo(200);
		DocumentContext policies = JsonPath.parse(all.body());
		assertThat(policies.<List<Object>>read("$.policies[?(@.name == 'orders')].limit")).containsExactly(10);
		assertThat(policies.<List<Object>>read("$.policies[?(@.name == 'resources')].limit")).containsExactly(5);
		assertThat(policies.<String>read("$.store")).startsWith("InMemoryRateLimitStore");
		assertThat(policies.<List<Object>>read("$.unlimited")).as("handler methods no limit covers")
			.containsExactlyElementsOf(unlimitedHandlers());
		awayFromTheEndOfAWindowOf(Duration.ofMinutes(1));
		String user = newUser();
		for (int i = 0; i < 11; i++) {
			get(this.sample, "/api/v1/users/" + user + "/orders", newAddress());
		}
		// Rejected, so among the heaviest: shown, and read, as its keyed fingerprint, never as the key itself.
		String shown = fingerprint(user);
		assertThat(get(this.sample, "/actuator/ratelimits/orders", newAddress()).body())
			.contains("\"key\":\"" + shown + "\"")
			.doesNotContain(user);
		for (int i = 0; i < 2; i++) {
			HttpResponse<String> key = get(this.sample, "/actuator/ratelimits/orders/" + shown, newAddress());
			assertThat(key.statusCode()).isEqualTo(200);
			DocumentContext state = JsonPath.parse(key.body());
			assertThat(state.<Integer>read("$.remaining")).isEqualTo(0);
			assertThat(state.<Integer>read("$.limit")).isEqualTo(10);
			assertThat(state.<String>read("$.key")).isEqualTo(shown);
		}
		assertThat(get(this.sample, "/actuator/ratelimits/orders/" + user, newAddress()).statusCode())
			.as("a key is not read by its value with read-only access: the read is no oracle of live keys")
			.isEqualTo(400);
		assertThat(get(this.sample, "/actuator/ratelimits/no-such-policy/" + shown, newAddress()).statusCode())
			.isEqualTo(404);
		assertThat(send(this.sample, "DELETE", "/actuator/ratelimits/orders/" + shown).statusCode())
			.as("read-only unless access is granted")
			.isBetween(400, 499);
	}

	/** What the endpoint shows of a key that is no address: the first 12 hex digits of its HMAC-SHA256. */
	static String fingerprint(String key) throws GeneralSecurityException {
		Mac mac = Mac.getInstance("HmacSHA256");
		mac.init(new SecretKeySpec(FINGERPRINT_SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
		return "hmac:" + HexFormat.of().formatHex(mac.doFinal(key.getBytes(StandardCharsets.UTF_8)), 0, 6);
	}

	@Test
	void healthCarriesNoRateLimitHeaders() throws Exception {
		HttpResponse<String> health = get(this.tuned, "/actuator/health", newAddress());
		assertThat(health.statusCode()).isEqualTo(200);
		assertThat(health.headers().map().keySet()).noneMatch((name) -> name.toLowerCase().startsWith("ratelimit")
				|| name.toLowerCase().startsWith("x-ratelimit") || name.equalsIgnoreCase("retry-after"));
	}

	/**
	 * Check the 429 problem every layer of every stack answers with (the method layer's, as Spring writes it: the same
	 * members, the request's path as its {@code instance}, the same {@code Content-Type}), and return its
	 * {@code Retry-After}.
	 */
	long assertProblem(HttpResponse<String> rejected, String policy, String path, Duration window) {
		assertThat(rejected.statusCode()).as(rejected.body()).isEqualTo(429);
		assertThat(rejected.headers().allValues("Retry-After")).hasSize(1);
		long retryAfter = Long.parseLong(header(rejected, "Retry-After"));
		DocumentContext problem = JsonPath.parse(rejected.body());
		List<String> members = List.of("type", "title", "status", "detail", "instance", "policy", "violated-policies",
				"retryAfter");
		SoftAssertions.assertSoftly((softly) -> {
			softly.assertThat(rejected.headers().allValues("Content-Type")).as("Content-Type")
				.containsExactly("application/problem+json");
			softly.assertThat(retryAfter).as("Retry-After: seconds, at least 1, never more than the window")
				.isBetween(1L, window.toSeconds());
			softly.assertThat(problem.<Map<String, Object>>read("$")).as("the problem's members")
				.containsOnlyKeys(members);
			softly.assertThat(problem.<String>read("$.type")).isEqualTo(PROBLEM_TYPE);
			softly.assertThat(problem.<String>read("$.title")).isEqualTo("Too Many Requests");
			softly.assertThat(problem.<Integer>read("$.status")).isEqualTo(429);
			softly.assertThat(problem.<String>read("$.detail"))
				.isEqualTo("Rate limit of policy '" + policy + "' exceeded. Retry after " + retryAfter + " seconds.");
			softly.assertThat(problem.<String>read("$.instance")).as("instance").isEqualTo(path);
			softly.assertThat(problem.<String>read("$.policy")).isEqualTo(policy);
			softly.assertThat(problem.<List<String>>read("$['violated-policies']")).containsExactly(policy);
			softly.assertThat(problem.<Number>read("$.retryAfter").longValue()).as("retryAfter")
				.isEqualTo(retryAfter);
		});
		return retryAfter;
	}

	/** The item of a structured field's list (RateLimit, RateLimit-Policy) that names this policy. */
	static Optional<String> item(String field, String policy) {
		return Arrays.stream(field.split(",\\s*")).filter((item) -> item.startsWith("\"" + policy + "\";")).findFirst();
	}

	static String header(HttpResponse<?> response, String name) {
		List<String> values = response.headers().allValues(name);
		assertThat(values).as("%s of %s", name, response.headers().map()).hasSize(1);
		return values.get(0);
	}

	/** A client address no other test uses. */
	static String newAddress() {
		int address = addresses.getAndIncrement();
		return "198.18." + (address >> 8) + "." + (address & 255);
	}

	static String newUser() {
		return "user-" + UUID.randomUUID();
	}

	/**
	 * Wait, if need be, until the end of the current fixed window (aligned to the epoch, as the sample's are) is more
	 * than a few seconds away, so that a test's requests fall in one window.
	 */
	static void awayFromTheEndOfAWindowOf(Duration window) throws InterruptedException {
		while (System.currentTimeMillis() % window.toMillis() > window.toMillis() - 5_000) {
			Thread.sleep(200);
		}
	}

	/** The value of a counter over actuator's metrics endpoint, 0 when nothing was counted with these tags. */
	double meter(SampleApp app, String name, String... tags) throws Exception {
		StringBuilder path = new StringBuilder("/actuator/metrics/" + name);
		for (int i = 0; i < tags.length; i++) {
			path.append((i == 0) ? '?' : '&').append("tag=").append(tags[i]);
		}
		HttpResponse<String> response = get(app, path.toString(), newAddress());
		if (response.statusCode() == 404) {
			return 0;
		}
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		List<Number> counts = JsonPath.parse(response.body())
			.read("$.measurements[?(@.statistic == 'COUNT')].value");
		assertThat(counts).as(response.body()).hasSize(1);
		return counts.get(0).doubleValue();
	}

	HttpResponse<String> get(SampleApp app, String path, String forwardedFor, String... headers)
			throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(app.uri(path))
			.header("X-Forwarded-For", forwardedFor)
			.header("Connection", "close")
			.timeout(Duration.ofSeconds(10));
		if (headers.length > 0) {
			request.headers(headers);
		}
		return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	HttpResponse<String> send(SampleApp app, String method, String path) throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(app.uri(path))
			.method(method, HttpRequest.BodyPublishers.noBody())
			.header("X-Forwarded-For", newAddress())
			.header("Connection", "close")
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	HttpResponse<String> post(SampleApp app, String path, String forwardedFor, String json)
			throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(app.uri(path))
			.header("X-Forwarded-For", forwardedFor)
			.header("Content-Type", "application/json")
			.header("Connection", "close")
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	static String[] concat(List<String> first, List<String> second) {
		List<String> all = new ArrayList<>(first);
		all.addAll(second);
		return all.toArray(String[]::new);
	}

}
