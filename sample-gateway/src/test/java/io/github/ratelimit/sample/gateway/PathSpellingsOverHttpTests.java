package io.github.ratelimit.sample.gateway;

import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.github.ratelimit.test.NoBlockingOnEventLoops;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Once a route's limit or a filter is spent, the spellings of its path a client can send: a trailing slash, repeated
 * slashes, dot segments (plain and encoded), encoded separators, path parameters, encoded letters and other letter
 * case. Each is limited like the path itself (429) or refused before routing (400 when not in its normal form, 404 in
 * other letter case); the API never receives a path that a server cleaning paths up, or ignoring case, would serve as
 * the limited one.
 */
@ExtendWith(NoBlockingOnEventLoops.class)
class PathSpellingsOverHttpTests {

	/** Spellings the gateway refuses before routing: a service behind it could resolve them to another path. */
	private static final List<String> NOT_NORMALIZED = List.of("//api/v1/PATH", "/api//v1/PATH", "/api/v1//PATH",
			"/api/./v1/PATH", "/api/v1/x/../PATH", "/api/v1/PATH/.", "/api/v1/%2e/PATH", "/api/v1/x/%2E%2E/PATH",
			"/api/v1%2FPATH", "/api%2fv1%2fPATH", "/api/v1%5CPATH", "/api/;x=1/v1/PATH", "/api/v1/PATH//");

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private Upstream upstream;

	private ConfigurableApplicationContext app;

	@AfterEach
	void stop() {
		if (this.app != null) {
			this.app.close();
		}
		if (this.upstream != null) {
			this.upstream.close();
		}
	}

	@Test
	void noSpellingOfARoutesLimitedPathReachesTheApiOnceTheLimitIsSpent() throws Exception {
		start();
		for (int i = 0; i < 5; i++) {
			assertThat(get("/api/v1/resources").statusCode()).isEqualTo(200);
		}
		int before = this.upstream.paths().size();
		assertStatuses("resources", Map.of("/api/v1/resources", 429, "/api/v1/resources/", 429,
				"/api/v1/resources;x=1", 429, "/api;a=b/v1/resources", 429, "/api/v1/%72esources", 429,
				"/api/v1/resources?x=1", 429));
		assertCaseVariantsRefused("/api/v1/resources");
		assertThat(get("/api/v1/other").statusCode()).as("another path, to the catch-all route").isEqualTo(200);
		assertThat(get("/API/v1/other").statusCode()).as("no route's path in any case").isEqualTo(404);
		assertThat(this.upstream.paths().subList(before, this.upstream.paths().size()))
			.as("what reached the API once the limit was spent")
			.containsExactly("/api/v1/other")
			.noneMatch((path) -> folded(path).equals("/api/v1/resources"));
	}

	@Test
	void noSpellingOfARoutesLimitedPathWithAVariableReachesTheApiOnceTheLimitIsSpent() throws Exception {
		start();
		for (int i = 0; i < 10; i++) {
			assertThat(get("/api/v1/users/u-1/orders").statusCode()).isEqualTo(200);
		}
		int before = this.upstream.paths().size();
		assertStatuses("users/u-1/orders", Map.of("/api/v1/users/u-1/orders", 429, "/api/v1/users/u-1/orders/", 429,
				"/api/v1/users/u-1/%6Frders", 429, "/api/v1/users/u-1/orders;x=1", 429));
		assertCaseVariantsRefused("/api/v1/users/u-1/orders");
		assertThat(this.upstream.paths().subList(before, this.upstream.paths().size()))
			.as("what reached the API once the limit was spent")
			.isEmpty();
		assertThat(get("/api/v1/users/U-1/orders").statusCode())
			.as("the route's own path: another user id is another key, as it is another user to the API")
			.isEqualTo(200);
	}

	@Test
	void noSpellingOfAFilteredPathReachesTheApiOnceTheFilterIsSpent() throws Exception {
		// A path of the unlimited catch-all route: only the filter layer limits it.
		start("--ratelimit.filters.gw.paths=/api/v1/anything", "--ratelimit.filters.gw.limit=2",
				"--ratelimit.filters.gw.window=1h", "--ratelimit.filters.gw.algorithm=sliding-log");
		assertThat(get("/api/v1/anything").statusCode()).isEqualTo(200);
		assertThat(get("/api/v1/anything").statusCode()).isEqualTo(200);
		int before = this.upstream.paths().size();
		assertStatuses("anything", Map.of("/api/v1/anything", 429, "/api/v1/anything/", 429,
				"/api/v1/anything;x=1", 429, "/api;a=b/v1/anything", 429, "/api/v1/%61nything", 429,
				"/api/v1/anything?x=1", 429));
		assertCaseVariantsRefused("/api/v1/anything");
		assertThat(get("/api/v1/something").statusCode()).as("another path").isEqualTo(200);
		assertThat(this.upstream.paths().subList(before, this.upstream.paths().size()))
			.containsExactly("/api/v1/something")
			.noneMatch((path) -> folded(path).equals("/api/v1/anything"));
	}

	@Test
	void aLimitedPathInOtherCaseIsRefusedBeforeAnyRouteOrFilterCountsIt() throws Exception {
		start("--ratelimit.filters.gw.paths=/api/**", "--ratelimit.filters.gw.limit=1",
				"--ratelimit.filters.gw.window=1h", "--ratelimit.filters.gw.algorithm=sliding-log");
		HttpResponse<String> refused = get("/api/v1/Resources");
		assertThat(refused.statusCode()).isEqualTo(404);
		assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(refused.body()).contains("\"status\":404").contains("letter case");
		assertThat(get("/api/v1/resources").statusCode()).as("the refusal took nothing").isEqualTo(200);
		assertThat(this.upstream.paths()).containsExactly("/api/v1/resources");
	}

	@Test
	void aPathNotInItsNormalFormIsRefusedWithAProblemBeforeAnyRouteOrFilterCountsIt() throws Exception {
		start("--ratelimit.filters.gw.paths=/api/**", "--ratelimit.filters.gw.limit=1",
				"--ratelimit.filters.gw.window=1h", "--ratelimit.filters.gw.algorithm=sliding-log");
		HttpResponse<String> refused = get("/api//v1/resources");
		assertThat(refused.statusCode()).isEqualTo(400);
		assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(refused.body()).contains("\"status\":400").contains("normal form");
		assertThat(get("/api/v1/resources").statusCode()).as("the refusal took nothing").isEqualTo(200);
		assertThat(this.upstream.paths()).containsExactly("/api/v1/resources");
	}

	/** The limited path's spellings answer as expected, and each one that is not in its normal form 400. */
	private void assertStatuses(String segment, Map<String, Integer> expected) throws Exception {
		for (Map.Entry<String, Integer> spelling : expected.entrySet()) {
			assertThat(get(spelling.getKey()).statusCode()).as(spelling.getKey()).isEqualTo(spelling.getValue());
		}
		for (String spelling : NOT_NORMALIZED) {
			String path = spelling.replace("PATH", segment);
			assertThat(get(path).statusCode()).as(path).isEqualTo(400);
		}
	}

	/**
	 * The limited path in other letter case, in each part and encoded, with and without a trailing slash or a path
	 * parameter, is refused 404 with a problem before routing.
	 */
	private void assertCaseVariantsRefused(String path) throws Exception {
		int last = path.lastIndexOf('/') + 1;
		String segment = path.substring(last);
		List<String> variants = List.of(path.toUpperCase(Locale.ROOT), "/API" + path.substring(4),
				path.substring(0, last) + Character.toUpperCase(segment.charAt(0)) + segment.substring(1),
				path.substring(0, last) + segment.toUpperCase(Locale.ROOT) + "/",
				path.substring(0, last) + "%" + Integer.toHexString(Character.toUpperCase(segment.charAt(0)))
						+ segment.substring(1),
				path.substring(0, last) + segment.toUpperCase(Locale.ROOT) + ";x=1", "/Api" + path.substring(4) + "?x=1");
		for (String variant : variants) {
			HttpResponse<String> refused = get(variant);
			assertThat(refused.statusCode()).as(variant).isEqualTo(404);
			assertThat(refused.body()).as(variant).contains("letter case");
		}
	}

	/** The path a server ignoring case would serve: {@link #cleanedUp cleaned up}, in lower case. */
	private static String folded(String rawPath) {
		return cleanedUp(rawPath).toLowerCase(Locale.ROOT);
	}

	/**
	 * The path a lenient server would serve: segments decoded and split at decoded separators too, path parameters,
	 * empty and {@code .} segments dropped, {@code ..} resolved, no trailing slash.
	 */
	private static String cleanedUp(String rawPath) {
		Deque<String> segments = new ArrayDeque<>();
		for (String segment : rawPath.split("/")) {
			int parameters = segment.indexOf(';');
			String value = URLDecoder.decode((parameters < 0) ? segment : segment.substring(0, parameters),
					StandardCharsets.UTF_8);
			for (String part : value.split("[/\\\\]")) {
				if ("..".equals(part)) {
					segments.pollLast();
				}
				else if (!part.isEmpty() && !".".equals(part)) {
					segments.addLast(part);
				}
			}
		}
		return "/" + String.join("/", segments);
	}

	private void start(String... arguments) throws Exception {
		this.upstream = Upstream.start();
		List<String> all = new ArrayList<>(List.of("--server.port=0", "--spring.data.redis.port=1",
				"--upstream.uri=" + this.upstream.uri(),
				// Hour-long windows: no window ends between two requests of a test.
				"--ratelimit.policies.resources.window=1h", "--ratelimit.policies.orders.window=1h"));
		all.addAll(List.of(arguments));
		this.app = SpringApplication.run(SampleGatewayApplication.class, all.toArray(new String[0]));
	}

	private HttpResponse<String> get(String path) throws Exception {
		String port = this.app.getEnvironment().getProperty("local.server.port");
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
