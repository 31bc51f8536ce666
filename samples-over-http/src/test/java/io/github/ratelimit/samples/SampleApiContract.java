package io.github.ratelimit.samples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rest of the HTTP contract of the sample API, {@code sample-app}'s, which {@code sample-webflux-app} keeps too:
 * each algorithm's endpoint, the layers (the {@code edge} filter on {@code /api/**} before dispatch, with the
 * application-wide {@code account} quota it draws; several limits on a method that pass or fail together), plans by
 * API key, a login limit that counts failed attempts only, and the plans in the {@code ratelimits} endpoint.
 * <p>
 * Here {@link #sample} has its algorithms' windows of 10 seconds stretched to an hour, so that the units a burst
 * takes do not depend on how fast this machine answers, and {@link #tuned} an {@code edge} of 8 per address that
 * comes back at one an hour, so that a test reaches its end.
 */
abstract class SampleApiContract extends RateLimitedRoutesContract {

	private static final List<String> ALGORITHMS = List.of("fixed-window", "sliding-log", "sliding-counter",
			"token-bucket", "leaky-bucket");

	@Override
	List<String> stackArgs() {
		// API keys issued on the free plan for the searches of these tests, besides the sample's demo keys.
		return List.of("--sample.api-keys.search-key-a=free", "--sample.api-keys.search-key-b=free",
				"--sample.api-keys.endpoint-key=free");
	}

	@Override
	List<String> sampleArgs() {
		return ALGORITHMS.stream().map((policy) -> "--ratelimit.policies." + policy + ".window=1h").toList();
	}

	@Override
	List<String> tunedArgs() {
		return List.of("--ratelimit.filters.edge.limit=1", "--ratelimit.filters.edge.burst=8",
				"--ratelimit.filters.edge.window=1h");
	}

	@Test
	void eachAlgorithmsEndpointAdmitsItsCapacityInABurstThenAnswersTheProblem() throws Exception {
		Map<String, Integer> capacities = Map.of("fixed-window", 10, "sliding-log", 10, "sliding-counter", 10,
				"token-bucket", 5, "leaky-bucket", 5);
		for (String algorithm : ALGORITHMS) {
			String address = newAddress();
			String path = "/api/v1/algorithms/" + algorithm;
			for (int i = 0; i < capacities.get(algorithm); i++) {
				HttpResponse<String> admitted = get(this.sample, path, address);
				assertThat(admitted.statusCode()).as("%s, request %d", algorithm, i + 1).isEqualTo(200);
				assertThat(admitted.body()).contains("\"algorithm\":\"" + algorithm + "\"");
				assertThat(header(admitted, "RateLimit-Limit")).isEqualTo(capacities.get(algorithm).toString());
			}
			assertProblem(get(this.sample, path, address), algorithm, path, Duration.ofHours(1));
		}
	}

	@Test
	void theEdgeFilterCountsEveryApiRequestEvenOneNoHandlerMatchesThenAnswersTheSameProblem() throws Exception {
		String address = newAddress();
		HttpResponse<String> unmatched = get(this.tuned, "/api/v1/no-such-thing", address);
		assertThat(unmatched.statusCode()).isEqualTo(404);
		assertThat(header(unmatched, "RateLimit-Limit")).isEqualTo("8");
		assertThat(header(unmatched, "RateLimit-Remaining")).isEqualTo("7");
		assertThat(item(header(unmatched, "RateLimit-Policy"), "edge")).hasValue("\"edge\";q=8;w=3600");
		HttpResponse<String> unlimited = get(this.tuned, "/api/v1/unlimited", address);
		assertThat(unlimited.statusCode()).isEqualTo(200);
		assertThat(header(unlimited, "RateLimit-Remaining")).as("one bucket for every path under /api/**")
			.isEqualTo("6");
		for (int remaining = 5; remaining >= 0; remaining--) {
			assertThat(header(get(this.tuned, "/api/v1/no-such-thing", address), "RateLimit-Remaining"))
				.isEqualTo(Integer.toString(remaining));
		}
		assertProblem(get(this.tuned, "/api/v1/no-such-thing", address), "edge", "/api/v1/no-such-thing",
				Duration.ofHours(1));
		assertProblem(get(this.tuned, "/api/v1/resources", address), "edge", "/api/v1/resources",
				Duration.ofHours(1));
		assertThat(get(this.tuned, "/actuator/health", address).statusCode()).as("outside /api/**").isEqualTo(200);
		assertThat(get(this.tuned, "/api/v1/no-such-thing", newAddress()).statusCode()).as("another address")
			.isEqualTo(404);
	}

	@Test
	void theApplicationWideQuotaIsLeftOutOfEveryStylesHeaders() throws Exception {
		HttpResponse<String> response = get(this.tuned, "/api/v1/unlimited", newAddress());
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(header(response, "RateLimit-Policy")).isEqualTo("\"edge\";q=8;w=3600");
		assertThat(header(response, "RateLimit")).startsWith("\"edge\";r=7;t=");
		assertThat(header(response, "RateLimit-Limit")).as("the edge's, not the account's 5,000").isEqualTo("8");
		assertThat(header(response, "X-RateLimit-Limit")).isEqualTo("8");
	}

	@Test
	void aSearchRejectedByTheLimitPerAddressTakesNothingFromTheLimitPerKey() throws Exception {
		String address = newAddress();
		for (int i = 0; i < 3; i++) {
			assertThat(search(address, "search-key-a").statusCode()).isEqualTo(200);
		}
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> rejected = search(address, "search-key-a");
			assertProblem(rejected, "search-per-ip", "/api/v1/search", Duration.ofSeconds(2));
		}
		// 10 a minute per key: 3 spent above, none by the 5 rejections.
		for (int i = 0; i < 7; i++) {
			assertThat(search(newAddress(), "search-key-a").statusCode()).isEqualTo(200);
		}
		assertProblem(search(newAddress(), "search-key-a"), "search-per-key", "/api/v1/search", Duration.ofMinutes(1));
		assertThat(search(newAddress(), "search-key-b").statusCode()).as("another key").isEqualTo(200);
	}

	@Test
	void theQuotaFollowsThePlanOfAKeyThisApiIssuedAndAnInventedKeyIsNone() throws Exception {
		String address = newAddress();
		for (int i = 0; i < 10; i++) {
			HttpResponse<String> pro = get(this.sample, "/api/v1/quota", address, "X-API-Key", "demo-pro-key");
			assertThat(pro.statusCode()).isEqualTo(200);
			assertThat(JsonPath.parse(pro.body()).<Integer>read("$['plan-limit']")).isEqualTo(10);
			assertThat(JsonPath.parse(pro.body()).<Integer>read("$.remaining")).isEqualTo(9 - i);
			assertThat(header(pro, "RateLimit-Limit")).isEqualTo("10");
		}
		assertProblem(get(this.sample, "/api/v1/quota", address, "X-API-Key", "demo-pro-key"), "quota",
				"/api/v1/quota", Duration.ofMinutes(1));
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> free = get(this.sample, "/api/v1/quota", address, "X-API-Key", "demo-free-key");
			assertThat(free.statusCode()).isEqualTo(200);
			assertThat(JsonPath.parse(free.body()).<Integer>read("$['plan-limit']")).isEqualTo(3);
		}
		assertThat(get(this.sample, "/api/v1/quota", address, "X-API-Key", "demo-free-key").statusCode())
			.isEqualTo(429);
		String inventing = newAddress();
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> invented = get(this.sample, "/api/v1/quota", inventing, "X-API-Key", "pro-" + i);
			assertThat(invented.statusCode()).isEqualTo(200);
			assertThat(JsonPath.parse(invented.body()).<Integer>read("$['plan-limit']")).isEqualTo(3);
		}
		HttpResponse<String> rejected = get(this.sample, "/api/v1/quota", inventing, "X-API-Key", "pro-3");
		assertThat(rejected.statusCode()).as("free, by address, whatever the key").isEqualTo(429);
		assertThat(header(rejected, "RateLimit-Limit")).isEqualTo("3");
	}

	@Test
	void onlyFailedLoginsCountAndTheFifthLocksTheClientOutForAnHour() throws Exception {
		awayFromTheEndOfAWindowOf(Duration.ofMinutes(15));
		String address = newAddress();
		for (int i = 0; i < 3; i++) {
			assertThat(login(address, "wrong").statusCode()).isEqualTo(401);
		}
		for (int i = 0; i < 10; i++) {
			assertThat(login(address, "demo").statusCode()).as("a successful login is given back").isEqualTo(200);
		}
		assertThat(login(address, "wrong").statusCode()).isEqualTo(401);
		assertThat(login(address, "wrong").statusCode()).as("the fifth failure").isEqualTo(401);
		HttpResponse<String> lockedOut = login(address, "demo");
		assertThat(lockedOut.statusCode()).as("the right password, locked out").isEqualTo(429);
		long retryAfter = Long.parseLong(header(lockedOut, "Retry-After"));
		assertThat(retryAfter).as("an hour, not the window's 15 minutes").isBetween(3_590L, 3_600L);
		DocumentContext problem = JsonPath.parse(lockedOut.body());
		assertThat(problem.<String>read("$.type"))
			.isEqualTo("https://iana.org/assignments/http-problem-types#abnormal-usage-detected");
		assertThat(problem.<String>read("$.detail")).isEqualTo("Locked out of rate limit policy 'login' for abnormal "
				+ "usage. Retry after " + retryAfter + " seconds.");
		assertThat(problem.<String>read("$.policy")).isEqualTo("login");
		assertThat(problem.<Number>read("$.retryAfter").longValue()).isEqualTo(retryAfter);
		assertThat(login(newAddress(), "wrong").statusCode()).as("another address").isEqualTo(401);
	}

	@Test
	void aClientRunsTwoRendersAtOnceAndAThirdPassesOnceOneEnded() throws Exception {
		String address = newAddress();
		List<CompletableFuture<HttpResponse<String>>> running = new ArrayList<>();
		// Threads of their own: the common pool may run one task at a time on a small machine.
		ExecutorService clients = Executors.newFixedThreadPool(2);
		for (int i = 0; i < 2; i++) {
			running.add(CompletableFuture.supplyAsync(() -> getUnchecked(this.sample, "/api/v1/renders?millis=3000",
					address), clients));
		}
		clients.shutdown();
		// A head start, so that no probe takes a slot as a render arrives. Both are in flight once the third is
		// rejected (while fewer than two run, it passes and ends at once). A probe every 50 ms, far below the edge
		// filter's 100 a second.
		Thread.sleep(500);
		HttpResponse<String> third;
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		do {
			third = get(this.sample, "/api/v1/renders?millis=0", address);
		}
		while (third.statusCode() == 200 && System.nanoTime() < deadline && pause(50));
		assertThat(third.statusCode()).as(third.body()).isEqualTo(429);
		assertThat(JsonPath.parse(third.body()).<String>read("$.policy")).isEqualTo("renders");
		assertThat(third.headers().firstValue("Retry-After")).as("nothing says when one ends").isEmpty();
		assertThat(header(third, "RateLimit-Limit")).isEqualTo("2");
		assertThat(Long.parseLong(header(third, "RateLimit-Reset"))).as("every slot back within the hold")
			.isBetween(1L, 60L);
		DocumentContext problem = JsonPath.parse(third.body());
		assertThat(problem.<String>read("$.policy")).isEqualTo("renders");
		assertThat(problem.<String>read("$.detail")).contains("Concurrency limit of policy 'renders'");
		for (CompletableFuture<HttpResponse<String>> render : running) {
			assertThat(render.join().statusCode()).isEqualTo(200);
		}
		assertThat(get(this.sample, "/api/v1/renders?millis=0", address).statusCode()).as("both ended")
			.isEqualTo(200);
		assertThat(get(this.sample, "/api/v1/renders?millis=0", newAddress()).statusCode()).as("another client")
			.isEqualTo(200);
	}

	private static boolean pause(long millis) throws InterruptedException {
		Thread.sleep(millis);
		return true;
	}

	private HttpResponse<String> getUnchecked(SampleApp app, String path, String address) {
		try {
			return get(app, path, address);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void theRateLimitsEndpointShowsTheLayersAndEachPlansLimits() throws Exception {
		DocumentContext all = JsonPath.parse(get(this.sample, "/actuator/ratelimits", newAddress()).body());
		assertThat(all.<List<Object>>read("$.policies[?(@.name == 'edge')].declaredBy[*]"))
			.containsExactly("ratelimit.filters.edge");
		assertThat(all.<List<Object>>read("$.policies[?(@.name == 'account')].limit")).containsExactly(10_000);
		assertThat(all.<List<Object>>read("$.policies[?(@.name == 'quota')].plans.pro.limit")).containsExactly(10);
		assertThat(all.<List<Object>>read("$.policies[?(@.name == 'quota')].plans.free.limit")).containsExactly(3);
		assertThat(all.<List<Object>>read("$.policies[?(@.name == 'login')].mode")).containsExactly("ENFORCE");
		String address = newAddress();
		for (int i = 0; i < 4; i++) {
			get(this.sample, "/api/v1/quota", address, "X-API-Key", "endpoint-key");
		}
		// Rejected once, so among the heaviest, and read by its fingerprint: an API key is never shown.
		DocumentContext key = JsonPath.parse(get(this.sample, "/actuator/ratelimits/quota/"
				+ fingerprint("endpoint-key"), newAddress()).body());
		assertThat(key.<Integer>read("$.plans.free.limit")).isEqualTo(3);
		assertThat(key.<Integer>read("$.plans.free.remaining")).isEqualTo(0);
		assertThat(key.<Integer>read("$.plans.pro.limit")).isEqualTo(10);
		assertThat(key.<Integer>read("$.plans.pro.remaining")).isEqualTo(10);
	}

	private HttpResponse<String> search(String address, String apiKey) throws Exception {
		return get(this.sample, "/api/v1/search?q=x", address, "X-API-Key", apiKey);
	}

	private HttpResponse<String> login(String address, String password) throws Exception {
		return post(this.sample, "/api/v1/login", address,
				"{\"username\":\"demo\",\"password\":\"" + password + "\"}");
	}

}
