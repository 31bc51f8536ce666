package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's layered limits over real HTTP, each client a different address behind a trusted proxy (127.0.0.1):
 * several limits on a method pass or fail together, a shared quota is drawn by every endpoint naming it, the login
 * limit counts failed logins only, and a shadow policy never rejects.
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
	void aSearchRejectedByTheLimitPerAddressTakesNothingFromTheLimitPerKey() throws Exception {
		start();
		for (int i = 0; i < 3; i++) {
			assertThat(search("198.51.100.1", "key-a").statusCode()).isEqualTo(200);
		}
		for (int i = 0; i < 5; i++) {
			HttpResponse<String> rejected = search("198.51.100.1", "key-a");
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.body()).contains("\"violated-policies\":[\"search-per-ip\"]");
		}
		// 10 per minute for the key: 3 spent above, none by the 5 rejections.
		for (int i = 0; i < 3; i++) {
			assertThat(search("198.51.100.2", "key-a").statusCode()).isEqualTo(200);
			assertThat(search("198.51.100.3", "key-a").statusCode()).isEqualTo(200);
		}
		assertThat(search("198.51.100.4", "key-a").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = search("198.51.100.5", "key-a");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"search-per-key\"]");
		assertThat(search("198.51.100.5", "key-b").statusCode()).as("another key").isEqualTo(200);
	}

	@Test
	void onlyFailedLoginsCount() throws Exception {
		start();
		for (int i = 0; i < 3; i++) {
			assertThat(login("198.51.100.10", "demo", "wrong")).isEqualTo(401);
		}
		for (int i = 0; i < 10; i++) {
			assertThat(login("198.51.100.10", "demo", "demo")).as("a successful login is given back").isEqualTo(200);
		}
		assertThat(login("198.51.100.10", "demo", "wrong")).isEqualTo(401);
		assertThat(login("198.51.100.10", "demo", "wrong")).isEqualTo(401);
		assertThat(login("198.51.100.10", "demo", "wrong")).isEqualTo(429);
		assertThat(login("198.51.100.10", "demo", "demo")).as("once used up, every attempt waits").isEqualTo(429);
		assertThat(login("198.51.100.11", "demo", "wrong")).as("another address").isEqualTo(401);
	}

	@Test
	void theSharedQuotaIsDrawnByEveryEndpointThatNamesIt() throws Exception {
		start("--ratelimit.policies.account.limit=5", "--ratelimit.policies.account.burst=5",
				"--ratelimit.policies.account.window=1h");
		assertThat(search("198.51.100.20", "key-c").statusCode()).isEqualTo(200);
		assertThat(search("198.51.100.21", "key-d").statusCode()).isEqualTo(200);
		assertThat(login("198.51.100.22", "demo", "demo")).isEqualTo(200);
		assertThat(login("198.51.100.23", "demo", "wrong")).isEqualTo(401);
		assertThat(search("198.51.100.24", "key-e").statusCode()).isEqualTo(200);
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
		start("--ratelimit.policies.search-per-ip.skip=#request.getHeader('X-API-Key') == 'internal'");
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

	private void start(String... arguments) {
		String[] all = new String[arguments.length + 2];
		all[0] = "--server.port=0";
		all[1] = "--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1";
		System.arraycopy(arguments, 0, all, 2, arguments.length);
		this.app = SpringApplication.run(SampleApplication.class, all);
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
