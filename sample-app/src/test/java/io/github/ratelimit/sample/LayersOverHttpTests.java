package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's layered limits over real HTTP, each client a different address behind a trusted proxy (127.0.0.1):
 * a shared quota is drawn by every endpoint naming it, a shadow policy never rejects, skips and exempt addresses, and
 * the edge filter's own settings, each on an application started with the arguments it needs. The contracts every
 * stack keeps at the sample's own values (limits that pass or fail together, the login limit counting failed logins
 * only, the edge filter's answer, plans by API key) are samples-over-http's, run against the packaged jar.
 */
class LayersOverHttpTests {

	private static final String KEY = "X-API-Key";

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private ConfigurableApplicationContext app;

	@AfterEach
	void stop() {
		if (this.app != null) {
			this.app.close();
		}
	}

	@Test
	void theSharedQuotaIsDrawnByEveryApiRequestEvenOneThatMatchesNoHandler() throws Exception {
		start("--ratelimit.policies.account.limit=5", "--ratelimit.policies.account.burst=5",
				"--ratelimit.policies.account.window=1h");
		assertThat(search("198.51.100.20", "key-c").statusCode()).isEqualTo(200);
		assertThat(get("/api/v1/no-such-thing", "198.51.100.21", null).statusCode()).isEqualTo(404);
		assertThat(login("198.51.100.22", "demo", "demo")).isEqualTo(200);
		assertThat(login("198.51.100.23", "demo", "wrong")).isEqualTo(401);
		assertThat(get("/api/v1/resources", "198.51.100.24", null).statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = search("198.51.100.25", "key-f");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"account\"]");
		assertThat(login("198.51.100.26", "demo", "demo")).isEqualTo(429);
	}

	@Test
	void aShadowPolicyCountsButNeverRejects() throws Exception {
		start("--ratelimit.policies.login.mode=shadow");
		for (int i = 0; i < 12; i++) {
			assertThat(login("198.51.100.30", "demo", "wrong")).isEqualTo(401);
		}
	}

	@Test
	void aSkippedPolicyNeitherCountsNorLimits() throws Exception {
		start("--ratelimit.policies.search-per-ip.skip=#request.getHeader('X-API-Key') == 'internal'",
				"--ratelimit.policies.search-per-key.limit=100");
		for (int i = 0; i < 8; i++) {
			assertThat(search("198.51.100.40", "internal").statusCode()).isEqualTo(200);
		}
		assertThat(search("198.51.100.40", "internal").statusCode()).isEqualTo(200);
		for (int i = 0; i < 3; i++) {
			assertThat(search("198.51.100.40", "other").statusCode()).as("the skipped ones were not counted")
				.isEqualTo(200);
		}
		assertThat(search("198.51.100.40", "other").statusCode()).isEqualTo(429);
	}

	@Test
	void requestsTheFilterRejectsNeverReachTheMethodLimits() throws Exception {
		start("--ratelimit.filters.edge.limit=1", "--ratelimit.filters.edge.burst=2",
				"--ratelimit.filters.edge.window=1h");
		for (int i = 0; i < 2; i++) {
			assertThat(search("198.51.100.60", "key-h").statusCode()).isEqualTo(200);
		}
		for (int i = 0; i < 5; i++) {
			assertThat(search("198.51.100.60", "key-h").statusCode()).isEqualTo(429);
		}
		// search-per-key allows 10 a minute: 2 spent, none by the 5 the filter rejected.
		for (int address = 61; address <= 64; address++) {
			assertThat(search("198.51.100." + address, "key-h").statusCode()).isEqualTo(200);
			assertThat(search("198.51.100." + address, "key-h").statusCode()).isEqualTo(200);
		}
		HttpResponse<String> rejected = search("198.51.100.65", "key-h");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"search-per-key\"]");
	}

	@Test
	void aRequestTheMethodLimitsRejectStillCountsAtTheFilterLayer() throws Exception {
		start("--ratelimit.filters.edge.limit=1", "--ratelimit.filters.edge.burst=5",
				"--ratelimit.filters.edge.window=1h");
		for (int i = 0; i < 3; i++) {
			assertThat(search("198.51.100.66", "key-l").statusCode()).isEqualTo(200);
		}
		for (int i = 0; i < 2; i++) {
			assertThat(search("198.51.100.66", "key-l").statusCode()).as("search-per-ip").isEqualTo(429);
		}
		// edge holds 5, and counted every request that reached it: the 3 searches that passed and the 2 the method
		// layer rejected.
		HttpResponse<String> rejected = get("/api/v1/resources", "198.51.100.66", null);
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"edge\"]");
	}

	@Test
	void aFilterOnGetAlsoCountsHeadWhichSpringMvcAnswersWithTheGetHandler() throws Exception {
		start("--ratelimit.filters.getonly.paths=/api/v1/unlimited", "--ratelimit.filters.getonly.methods=GET",
				"--ratelimit.filters.getonly.limit=2", "--ratelimit.filters.getonly.window=1h");
		assertThat(send("GET", "/api/v1/unlimited")).isEqualTo(200);
		assertThat(send("HEAD", "/api/v1/unlimited")).isEqualTo(200);
		assertThat(send("HEAD", "/api/v1/unlimited")).isEqualTo(429);
		assertThat(send("GET", "/api/v1/unlimited")).isEqualTo(429);
		assertThat(send("POST", "/api/v1/unlimited")).as("not a GET: the filter does not apply").isNotEqualTo(429);
	}

	@ParameterizedTest
	@ValueSource(strings = { "path_pattern_parser", "ant_path_matcher" })
	void noSpellingOfAPathReachesItsHandlerWhileItsFiltersLookAway(String matchingStrategy) throws Exception {
		start("--spring.mvc.pathmatch.matching-strategy=" + matchingStrategy, "--ratelimit.filters.edge.limit=1",
				"--ratelimit.filters.edge.burst=2", "--ratelimit.filters.edge.window=1h");
		assertThat(send("GET", "/api/v1/unlimited")).isEqualTo(200);
		assertThat(send("GET", "/api/v1/unlimited")).isEqualTo(200);
		for (String spelling : new String[] { "/api/v1/unlimited", "//api/v1/unlimited", "/api/v1//unlimited",
				"/api//v1/unlimited", "/api/./v1/unlimited", "/x/../api/v1/unlimited", "/api/v1/unlimited;x=1",
				"/api;a=b/v1/unlimited", "/%61pi/v1/unlimited", "/api/v1/%75nlimited" }) {
			assertThat(send("GET", spelling)).as(spelling).isIn(400, 404, 429);
		}
	}

	private int send(String method, String path) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(uri(path))
			.method(method, HttpRequest.BodyPublishers.noBody())
			.header("X-Forwarded-For", "198.51.100.90")
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

	@Test
	void theApplicationWideQuotaIsNotShownToClientsUnlessConfiguredButItsRejectionSaysWhenToRetry() throws Exception {
		start("--ratelimit.headers.style=draft-11", "--ratelimit.policies.account.limit=3",
				"--ratelimit.policies.account.burst=3", "--ratelimit.policies.account.window=1h");
		HttpResponse<String> admitted = get("/api/v1/unlimited", "198.51.100.91", null);
		assertThat(admitted.headers().firstValue("RateLimit")).hasValueSatisfying(
				(value) -> assertThat(value).startsWith("\"edge\";r=").doesNotContain("account"));
		get("/api/v1/unlimited", "198.51.100.92", null);
		get("/api/v1/unlimited", "198.51.100.93", null);
		HttpResponse<String> rejected = get("/api/v1/unlimited", "198.51.100.94", null);
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"account\"]");
		assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
		assertThat(rejected.headers().firstValue("RateLimit").orElse("")).doesNotContain("account");
		this.app.close();
		start("--ratelimit.headers.style=draft-11", "--ratelimit.headers.show-shared-quotas=true");
		assertThat(get("/api/v1/unlimited", "198.51.100.95", null).headers().firstValue("RateLimit"))
			.hasValueSatisfying((value) -> assertThat(value).contains("\"account\";r="));
	}

	@Test
	void theQuotaFollowsThePlanOfTheApiKey() throws Exception {
		start();
		for (int i = 0; i < 3; i++) {
			assertThat(get("/api/v1/quota", "198.51.100.70", "free-key").statusCode()).isEqualTo(200);
		}
		assertThat(get("/api/v1/quota", "198.51.100.70", "free-key").statusCode()).isEqualTo(429);
		for (int i = 0; i < 10; i++) {
			HttpResponse<String> response = get("/api/v1/quota", "198.51.100.70", "pro-key");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.body()).contains("\"plan-limit\":10");
		}
		assertThat(get("/api/v1/quota", "198.51.100.70", "pro-key").statusCode()).isEqualTo(429);
		for (int i = 0; i < 3; i++) {
			assertThat(get("/api/v1/quota", "198.51.100.71", null).statusCode()).as("no key: free, by address")
				.isEqualTo(200);
		}
		assertThat(get("/api/v1/quota", "198.51.100.71", null).statusCode()).isEqualTo(429);
		assertThat(get("/api/v1/quota", "198.51.100.72", "198.51.100.71").statusCode())
			.as("an API key that is an address is not that address's counter").isEqualTo(200);
	}

	@Test
	void anExemptAddressIsLimitedOnlyByPoliciesWithAKeyOfTheirOwn() throws Exception {
		start("--ratelimit.client-ip.exempt=198.51.100.80/31", "--ratelimit.filters.edge.limit=1",
				"--ratelimit.filters.edge.burst=1", "--ratelimit.filters.edge.window=1h");
		for (int i = 0; i < 6; i++) {
			assertThat(search("198.51.100.80", "key-" + i).statusCode()).as("no edge, no search-per-ip")
				.isEqualTo(200);
		}
		for (int i = 0; i < 10; i++) {
			search("198.51.100.81", "key-j");
		}
		assertThat(search("198.51.100.81", "key-j").statusCode()).as("search-per-key still applies").isEqualTo(429);
		assertThat(search("198.51.100.82", "key-k").statusCode()).isEqualTo(200);
		assertThat(search("198.51.100.82", "key-k").statusCode()).as("not exempt").isEqualTo(429);
	}

	@Test
	void theEdgeFilterInShadowModeNeverRejects() throws Exception {
		start("--ratelimit.filters.edge.mode=shadow", "--ratelimit.filters.edge.limit=1",
				"--ratelimit.filters.edge.burst=1", "--ratelimit.filters.edge.window=1h");
		for (int i = 0; i < 3; i++) {
			assertThat(get("/api/v1/resources", "198.51.100.90", null).statusCode()).isEqualTo(200);
		}
	}

	@Test
	void theEdgeFilterCanBeSwitchedOff() throws Exception {
		start("--ratelimit.filters.edge.enabled=false", "--ratelimit.policies.account.limit=1",
				"--ratelimit.policies.account.burst=1", "--ratelimit.policies.account.window=1h");
		for (int i = 0; i < 3; i++) {
			assertThat(get("/api/v1/resources", "198.51.100.95", null).statusCode()).as("nor its shared quota")
				.isEqualTo(200);
		}
	}

	private HttpResponse<String> get(String path, String address, String apiKey) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
			.header("X-Forwarded-For", address)
			.timeout(Duration.ofSeconds(10));
		if (apiKey != null) {
			request.header(KEY, apiKey);
		}
		return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	/** The API keys these tests send, issued on the free plan but pro-key. */
	private static final String[] ISSUED_KEYS = { "key-c", "key-f", "key-h", "key-j", "key-k", "key-l", "internal",
			"other", "free-key", "198.51.100.71" };

	private void start(String... arguments) {
		List<String> all = new ArrayList<>(List.of("--server.port=0",
				"--spring.data.redis.port=" + SampleApplicationTests.NO_REDIS,
				"--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1", "--sample.api-keys.pro-key=pro"));
		for (String key : ISSUED_KEYS) {
			all.add("--sample.api-keys[" + key + "]=free");
		}
		all.addAll(List.of(arguments));
		this.app = SpringApplication.run(SampleApplication.class, all.toArray(new String[0]));
	}

	private HttpResponse<String> search(String address, String apiKey) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(uri("/api/v1/search?q=x"))
			.header("X-Forwarded-For", address)
			.header(KEY, apiKey)
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private int login(String address, String username, String password) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(uri("/api/v1/login"))
			.header("X-Forwarded-For", address)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers
				.ofString("{\"username\":\"" + username + "\",\"password\":\"" + password + "\"}"))
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.app.getEnvironment().getProperty("local.server.port") + path);
	}

}
