package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Limits per tenant from the sample's tenants table, over real HTTP: {@code /api/v1/tenants/{tenant}/reports} at each
 * tenant's own limit per minute (acme 3, globex 6, others the policy's 2), and {@code PUT /admin/tenants/{tenant}}
 * changing a limit for the tenant's next request, its count carried over, only with the admin token. The limiter's
 * clock is held still ten seconds into a minute, so that no window ends during a test.
 */
class TenantsOverHttpTests {

	private static final HttpClient client = HttpClient.newHttpClient();

	private static final String TOKEN = "s3cret-admin-token-0123456789abcdef";

	@Nested
	@Import(SampleApplicationTests.StillClock.class)
	@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
			properties = { "spring.data.redis.port=" + SampleApplicationTests.NO_REDIS,
					"sample.admin-token=" + TOKEN })
	class WithAnAdminToken {

		@LocalServerPort
		private int port;

		@Test
		void eachTenantHasItsOwnLimitPerMinuteFromTheTable() throws Exception {
			assertAdmitsThenRejects(this.port, "acme", 3);
			assertAdmitsThenRejects(this.port, "globex", 6);
			assertAdmitsThenRejects(this.port, "not-a-tenant", 2);
		}

		@Test
		void aChangedLimitAppliesToTheTenantsNextRequestWithItsCountCarriedOver() throws Exception {
			assertThat(put(this.port, "/admin/tenants/initech", "{\"limit\": 2}", TOKEN).statusCode())
				.isEqualTo(200);
			assertAdmitsThenRejects(this.port, "initech", 2);
			HttpResponse<String> changed = put(this.port, "/admin/tenants/initech", "{\"limit\": 5}",
					TOKEN);
			assertThat(changed.statusCode()).isEqualTo(200);
			assertThat(changed.body()).contains("\"limit\":5");
			for (int remaining = 2; remaining >= 0; remaining--) {
				HttpResponse<String> response = get(this.port, "/api/v1/tenants/initech/reports");
				assertThat(response.statusCode()).as("2 used of 5").isEqualTo(200);
				assertThat(response.headers().firstValue("RateLimit-Limit")).hasValue("5");
				assertThat(response.headers().firstValue("RateLimit-Remaining")).hasValue(Integer.toString(remaining));
			}
			assertThat(get(this.port, "/api/v1/tenants/initech/reports").statusCode()).isEqualTo(429);
		}

		@Test
		void changingALimitNeedsTheAdminTokenAndAValidLimit() throws Exception {
			assertThat(put(this.port, "/admin/tenants/acme", "{\"limit\": 1000}", null).statusCode()).isEqualTo(401);
			assertThat(put(this.port, "/admin/tenants/acme", "{\"limit\": 1000}", "guess").statusCode()).isEqualTo(403);
			assertThat(put(this.port, "/admin/tenants/acme", "{\"limit\": 0}", TOKEN).statusCode())
				.isEqualTo(400);
			assertThat(put(this.port, "/admin/tenants/acme", "{\"limit\": \"lots\"}", TOKEN)
				.statusCode()).isEqualTo(400);
			assertThat(put(this.port, "/admin/tenants/Not%20A%20Tenant", "{\"limit\": 5}", TOKEN)
				.statusCode()).isEqualTo(400);
		}

	}

	@Nested
	@Import(SampleApplicationTests.StillClock.class)
	@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
			properties = "spring.data.redis.port=" + SampleApplicationTests.NO_REDIS)
	class WithoutAnAdminToken {

		@LocalServerPort
		private int port;

		@Test
		void theAdminEndpointRefusesEveryRequest() throws Exception {
			assertThat(put(this.port, "/admin/tenants/acme", "{\"limit\": 1000}", null).statusCode()).isEqualTo(403);
			assertThat(put(this.port, "/admin/tenants/acme", "{\"limit\": 1000}", "").statusCode()).isEqualTo(403);
			assertThat(put(this.port, "/admin/tenants/acme", "{\"limit\": 1000}", "null").statusCode()).isEqualTo(403);
		}

	}

	@Nested
	@Import(SampleApplicationTests.StillClock.class)
	@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
			properties = { "spring.data.redis.port=" + SampleApplicationTests.NO_REDIS, "sample.admin-token=" + TOKEN,
					"ratelimit.policies.admin-attempts.limit=3" })
	class GuessingTheToken {

		@LocalServerPort
		private int port;

		@Test
		void aClientThatKeepsGuessingTheAdminTokenIsRejectedBeforeItsTokenIsCompared() throws Exception {
			assertThat(put(this.port, "/admin/tenants/umbrella", "{\"limit\": 4}", TOKEN).statusCode())
				.as("the right token counts nothing").isEqualTo(200);
			assertThat(put(this.port, "/admin/tenants/umbrella", "{\"limit\": 4}", null).statusCode()).isEqualTo(401);
			for (int i = 0; i < 2; i++) {
				assertThat(put(this.port, "/admin/tenants/umbrella", "{\"limit\": 4}", "guess-" + i).statusCode())
					.isEqualTo(403);
			}
			HttpResponse<String> rejected = put(this.port, "/admin/tenants/umbrella", "{\"limit\": 4}", "guess-3");
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.body()).contains("\"violated-policies\":[\"admin-attempts\"]");
		}

	}

	private static void assertAdmitsThenRejects(int port, String tenant, int limit) throws Exception {
		for (int i = 0; i < limit; i++) {
			HttpResponse<String> response = get(port, "/api/v1/tenants/" + tenant + "/reports");
			assertThat(response.statusCode()).as("%s, request %d", tenant, i + 1).isEqualTo(200);
			assertThat(response.headers().firstValue("RateLimit-Limit")).hasValue(Integer.toString(limit));
		}
		HttpResponse<String> rejected = get(port, "/api/v1/tenants/" + tenant + "/reports");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"reports\"]");
	}

	private static HttpResponse<String> get(int port, String path) throws Exception {
		return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	private static HttpResponse<String> put(int port, String path, String body, String token) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.header("Content-Type", "application/json")
			.PUT(HttpRequest.BodyPublishers.ofString(body));
		if (token != null) {
			request.header("X-Admin-Token", token);
		}
		return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

}
