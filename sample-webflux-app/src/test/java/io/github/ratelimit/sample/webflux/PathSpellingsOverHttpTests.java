package io.github.ratelimit.sample.webflux;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.test.NoBlockingOnEventLoops;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Once a filter or a method limit is spent, the spellings of its path a client can send: a trailing slash, repeated
 * slashes, dot segments (plain and encoded), encoded separators, path parameters, encoded letters and other cases. Each
 * is limited like the path itself (429) or reaches no handler (404); none is served. The filter layer matches the path
 * cleaned up too, so it limits every spelling that a gateway in front or a lenient server would serve as its path.
 */
@ExtendWith(NoBlockingOnEventLoops.class)
class PathSpellingsOverHttpTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private ConfigurableApplicationContext app;

	@AfterEach
	void stop() {
		if (this.app != null) {
			this.app.close();
		}
	}

	@Test
	void everySpellingOfAFilteredPathIsLimitedOnceTheFilterIsSpentAndAnotherCaseIsAnotherPath() throws Exception {
		start("--ratelimit.filters.spelled.paths=/api/v1/unlimited", "--ratelimit.filters.spelled.limit=2",
				"--ratelimit.filters.spelled.window=1h", "--ratelimit.filters.spelled.algorithm=sliding-log");
		assertThat(get("/api/v1/unlimited")).isEqualTo(200);
		assertThat(get("/api/v1/unlimited")).isEqualTo(200);
		Map<String, Integer> expected = new LinkedHashMap<>();
		for (String spelling : new String[] { "/api/v1/unlimited", "/api/v1/unlimited/", "//api/v1/unlimited",
				"/api//v1/unlimited", "/api/v1//unlimited", "/api/./v1/unlimited", "/x/../api/v1/unlimited",
				"/api/v1/unlimited/.", "/api/v1/%2e/unlimited", "/api/v1/x/%2E%2E/unlimited", "/api/v1%2Funlimited",
				"/api%2fv1%5Cunlimited", "/api/v1/unlimited;x=1", "/api;a=b/v1/unlimited", "/api/;x=1/v1/unlimited",
				"/%61pi/v1/%75nlimited", "/api/v1/unlimited?x=1" }) {
			expected.put(spelling, 429);
		}
		expected.put("/API/v1/unlimited", 404);
		expected.put("/api/v1/Unlimited", 404);
		assertThat(statuses(expected)).isEqualTo(expected);
	}

	@Test
	void noSpellingOfAMethodLimitedPathIsServedOnceTheLimitIsSpent() throws Exception {
		start("--ratelimit.policies.resources.window=1h");
		for (int i = 0; i < 5; i++) {
			assertThat(get("/api/v1/resources")).isEqualTo(200);
		}
		Map<String, Integer> expected = new LinkedHashMap<>();
		for (String spelling : new String[] { "/api/v1/resources", "/api/v1/resources;x=1", "/api;a=b/v1/resources",
				"/%61pi/v1/%72esources", "/api/v1/resources?x=1" }) {
			expected.put(spelling, 429); // served by the limited handler, so limited
		}
		for (String spelling : new String[] { "/api/v1/resources/", "//api/v1/resources", "/api//v1/resources",
				"/api/./v1/resources", "/x/../api/v1/resources", "/api/v1/%2e/resources", "/api/v1%2Fresources",
				"/api/;x=1/v1/resources", "/API/v1/resources", "/api/v1/Resources" }) {
			expected.put(spelling, 404); // WebFlux maps the path as sent: no handler
		}
		assertThat(statuses(expected)).isEqualTo(expected);
	}

	private Map<String, Integer> statuses(Map<String, Integer> spellings) throws Exception {
		Map<String, Integer> statuses = new LinkedHashMap<>();
		for (String spelling : spellings.keySet()) {
			statuses.put(spelling, get(spelling));
		}
		return statuses;
	}

	private void start(String... arguments) {
		String[] all = new String[arguments.length + 2];
		all[0] = "--server.port=0";
		all[1] = "--spring.data.redis.port=1";
		System.arraycopy(arguments, 0, all, 2, arguments.length);
		this.app = SpringApplication.run(SampleWebFluxApplication.class, all);
	}

	private int get(String path) throws Exception {
		String port = this.app.getEnvironment().getProperty("local.server.port");
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

}
