package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.testing.ResetRateLimits;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample started with its limits switched off, as an operator does in an emergency
 * ({@code java -jar sample-app.jar --ratelimit.enabled=false}): it starts (its tenant admin endpoint injects
 * {@code RateLimitTenants}), its limited endpoints answer beyond their limits with no rate limit header, and on its
 * Redis profile it has no store to ask.
 */
class LimitsOffOverHttpTests {

	private static final String ADMIN_TOKEN = "s3cret-admin-token-0123456789abcdef";

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private ConfigurableApplicationContext app;

	@AfterEach
	void stop() {
		if (this.app != null) {
			this.app.close();
		}
	}

	@Test
	void limitedEndpointsAnswerBeyondTheirLimitsWithNoRateLimitHeader() throws Exception {
		start();
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> reports = get("/api/v1/tenants/acme/reports");
			assertThat(reports.statusCode()).as("acme's reports, 3 a minute with limits on: request %d", i + 1)
				.isEqualTo(200);
			assertNoRateLimitHeader(reports.headers());
			HttpResponse<String> quota = get("/api/v1/quota");
			assertThat(quota.statusCode()).as("the quota, 3 a minute on the free plan: request %d", i + 1)
				.isEqualTo(200);
			assertThat(quota.body()).as("its RateLimitStatus argument has no limits").contains("\"plan-limit\":0");
			assertNoRateLimitHeader(quota.headers());
		}
	}

	@Test
	void theTenantAdminEndpointChangesALimitAndTheTestSupportResetsNothingWithoutFailing() throws Exception {
		start("--sample.admin-token=" + ADMIN_TOKEN);
		HttpResponse<String> changed = put("/admin/tenants/acme", "{\"limit\": 5}", ADMIN_TOKEN);
		assertThat(changed.statusCode()).isEqualTo(200);
		assertThat(changed.body()).contains("\"limit\":5");
		assertThat(put("/admin/tenants/acme", "{\"limit\": 5}", "guess").statusCode()).isEqualTo(403);
		ResetRateLimits.reset(this.app);
		assertThat(get("/api/v1/tenants/acme/reports").statusCode()).isEqualTo(200);
	}

	@Test
	void onTheRedisProfileWithNoRedisItStartsWithNoStoreToAsk() throws Exception {
		start("--spring.profiles.active=redis");
		assertThat(this.app.getBeanProvider(RateLimitStore.class).getIfAvailable()).isNull();
		for (int i = 0; i < 7; i++) {
			HttpResponse<String> resources = get("/api/v1/resources");
			assertThat(resources.statusCode()).as("resources, 5 a minute with limits on: request %d", i + 1)
				.isEqualTo(200);
			assertNoRateLimitHeader(resources.headers());
		}
	}

	private static void assertNoRateLimitHeader(HttpHeaders headers) {
		assertThat(headers.map().keySet())
			.noneMatch((name) -> name.toLowerCase().startsWith("ratelimit") || name.equalsIgnoreCase("retry-after"));
	}

	private void start(String... arguments) {
		List<String> all = new ArrayList<>(List.of("--server.port=0", "--ratelimit.enabled=false",
				"--spring.data.redis.port=" + SampleApplicationTests.NO_REDIS));
		all.addAll(List.of(arguments));
		this.app = SpringApplication.run(SampleApplication.class, all.toArray(new String[0]));
	}

	private HttpResponse<String> get(String path) throws Exception {
		return this.client.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(10)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> put(String path, String body, String token) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(uri(path))
			.header("Content-Type", "application/json")
			.header("X-Admin-Token", token)
			.timeout(Duration.ofSeconds(10))
			.PUT(HttpRequest.BodyPublishers.ofString(body))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.app.getEnvironment().getProperty("local.server.port") + path);
	}

}
