package io.github.ratelimit.client;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.PolicyValues;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RuntimeChanges;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Limits on the calls an application makes, against a real HTTP server standing for the called service: a call over
 * the policy fails before it is sent; the service's {@code Retry-After} and {@code RateLimit} fields hold calls off;
 * its tighter {@code RateLimit-Policy} quota lowers the policy, a looser one puts it back.
 */
class OutboundRateLimitsTests {

	private final AtomicInteger received = new AtomicInteger();

	/** The headers the service answers with next, and its status. */
	private final List<String[]> answer = new CopyOnWriteArrayList<>();

	private volatile int status = 200;

	private HttpServer server;

	private PolicyCatalog catalog;

	private RuntimeChanges changes;

	private OutboundRateLimits limits;

	@BeforeEach
	void start() throws IOException {
		this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		this.server.createContext("/", (exchange) -> {
			this.received.incrementAndGet();
			for (String[] header : this.answer) {
				exchange.getResponseHeaders().add(header[0], header[1]);
			}
			byte[] body = "ok".getBytes();
			exchange.sendResponseHeaders(this.status, body.length);
			exchange.getResponseBody().write(body);
			exchange.close();
		});
		this.server.start();
		Map<String, PolicyValues> policies = new LinkedHashMap<>();
		policies.put("partner", values("partner", "limit", 3, "window", "1h"));
		policies.put("paced", values("paced", "limit", 10, "window", "1m"));
		policies.put("slots", values("slots", "limit", 10, "algorithm", "CONCURRENCY"));
		this.catalog = PolicyCatalog.builder().policies(policies).build();
		RateLimitEngine engine = RateLimitEngine.builder(this.catalog,
				RateLimiter.builder(InMemoryRateLimitStore.builder().build()).build(),
				new StandardRateLimitHeadersWriter(), (request) -> "unused").build();
		this.changes = new RuntimeChanges(this.catalog, null);
		this.limits = new OutboundRateLimits(engine, this.changes);
	}

	@AfterEach
	void stop() {
		this.server.stop(0);
	}

	@Test
	void aCallOverThePolicyFailsWithoutBeingSent() {
		RestClient client = restClient("partner");
		for (int i = 0; i < 3; i++) {
			assertThat(client.get().uri("/orders").retrieve().body(String.class)).isEqualTo("ok");
		}
		assertThatExceptionOfType(OutboundRateLimitException.class)
			.isThrownBy(() -> client.get().uri("/orders").retrieve().body(String.class))
			.satisfies((ex) -> {
				assertThat(ex.getPolicy()).isEqualTo("partner");
				assertThat(ex.getHost()).isEqualTo("127.0.0.1");
				assertThat(ex.getRetryAfter()).isPositive();
				assertThat(ex.getMessage()).contains("'partner'").contains("'127.0.0.1'");
			});
		assertThat(this.received).hasValue(3);
	}

	@Test
	void aWebClientCallOverThePolicyFailsWithoutBeingSent() {
		WebClient client = WebClient.builder()
			.baseUrl("http://127.0.0.1:" + this.server.getAddress().getPort())
			.filter(RateLimitedExchangeFilter.of(this.limits, "partner"))
			.build();
		for (int i = 0; i < 3; i++) {
			assertThat(client.get().uri("/orders").retrieve().bodyToMono(String.class).block()).isEqualTo("ok");
		}
		assertThatExceptionOfType(OutboundRateLimitException.class)
			.isThrownBy(() -> client.get().uri("/orders").retrieve().bodyToMono(String.class).block());
		assertThat(this.received).hasValue(3);
	}

	@Test
	void theServicesRetryAfterHoldsCallsOffUntilThen() {
		RestClient client = restClient("paced");
		this.status = 429;
		this.answer.add(new String[] { "Retry-After", "120" });
		assertThatExceptionOfType(HttpClientErrorException.TooManyRequests.class)
			.isThrownBy(() -> client.get().uri("/orders").retrieve().body(String.class));
		this.status = 200;
		this.answer.clear();
		assertThatExceptionOfType(OutboundRateLimitException.class)
			.isThrownBy(() -> client.get().uri("/orders").retrieve().body(String.class))
			.satisfies((ex) -> assertThat(ex.getRetryAfter()).isBetween(Duration.ofSeconds(110), Duration.ofSeconds(120)));
		assertThat(this.received).as("held off: not sent").hasValue(1);
	}

	@Test
	void theServicesRateLimitFieldsWithNothingLeftHoldCallsOffOnWebClientToo() {
		WebClient client = WebClient.builder()
			.baseUrl("http://127.0.0.1:" + this.server.getAddress().getPort())
			.filter(RateLimitedExchangeFilter.of(this.limits, "paced"))
			.build();
		this.answer.add(new String[] { "RateLimit", "\"orders\";r=0;t=30" });
		assertThat(client.get().uri("/orders").retrieve().bodyToMono(String.class).block()).isEqualTo("ok");
		assertThatExceptionOfType(OutboundRateLimitException.class)
			.isThrownBy(() -> client.get().uri("/orders").retrieve().bodyToMono(String.class).block());
		assertThat(this.received).hasValue(1);
	}

	@Test
	void aTighterQuotaOfTheServiceLowersThePolicyAndALooserOnePutsItBack() throws Exception {
		RestClient client = restClient("paced");
		this.answer.add(new String[] { "RateLimit-Policy", "\"burst\";q=100;w=1, \"orders\";q=120;w=3600" });
		client.get().uri("/orders").retrieve().body(String.class);
		awaitLimit("paced", 2); // 120 an hour is 2 a minute
		assertThat(this.catalog.policy("paced").sources()).containsEntry("limit", "runtime");
		this.answer.clear();
		this.answer.add(new String[] { "RateLimit-Policy", "\"orders\";q=6000;w=60" });
		Thread.sleep(1_000); // one change a second at most
		client.get().uri("/orders").retrieve().body(String.class);
		awaitLimit("paced", 10); // never above the limit configured
		assertThat(this.changes.storedChanges()).doesNotContainKey("paced");
	}

	@Test
	void aQuotaOverAShorterWindowIsKeptWholeOverThePolicysLongerOne() {
		assertThat(OutboundPolicy.perWindow(new CalleeLimits.Quota(10, 60), 3_600_000)).as("10 a minute, per hour")
			.isEqualTo(10);
		assertThat(OutboundPolicy.perWindow(new CalleeLimits.Quota(120, 3600), 60_000)).as("120 an hour, per minute")
			.isEqualTo(2);
		assertThat(OutboundPolicy.perWindow(new CalleeLimits.Quota(999_999_999_999_999L, 999_999_999_999_999L),
				1L << 50)).isPositive();
	}

	@Test
	void anOperatorsChangeIsNeverReplacedByAServicesQuota() throws Exception {
		RestClient client = restClient("paced");
		assertThat(this.changes.change("paced", Map.of("limit", "5"), "alice")).isTrue();
		this.answer.add(new String[] { "RateLimit-Policy", "\"orders\";q=60;w=3600" });
		client.get().uri("/orders").retrieve().body(String.class);
		Thread.sleep(200);
		assertThat(this.catalog.policy("paced").policy().limit()).isEqualTo(5);
		assertThat(this.changes.storedChanges().get("paced").changedBy()).isEqualTo("alice");
	}

	@Test
	void aPolicyCallingSeveralHostsFollowsNoneOfTheirQuotas() throws Exception {
		RestClient client = restClient("paced");
		client.get().uri("http://localhost:" + this.server.getAddress().getPort() + "/orders").retrieve()
			.body(String.class);
		this.answer.add(new String[] { "RateLimit-Policy", "\"orders\";q=1;w=3600" });
		client.get().uri("/orders").retrieve().body(String.class);
		Thread.sleep(200);
		assertThat(this.catalog.policy("paced").policy().limit()).isEqualTo(10);
	}

	@Test
	void aResetInEpochSecondsHoldsOffUntilThen() {
		long now = System.currentTimeMillis();
		HttpHeaders headers = new HttpHeaders();
		headers.set("RateLimit-Remaining", "0");
		headers.set("RateLimit-Reset", Long.toString(now / 1000 + 40));
		assertThat(CalleeLimits.of(HttpStatus.OK, headers, now).holdOffSeconds()).isEqualTo(40);
		headers.set("RateLimit-Reset", "40");
		assertThat(CalleeLimits.of(HttpStatus.OK, headers, now).holdOffSeconds()).isEqualTo(40);
	}

	private void awaitLimit(String policy, long limit) throws InterruptedException {
		long deadline = System.nanoTime() + 5_000_000_000L;
		while (this.catalog.policy(policy).policy().limit() != limit && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(this.catalog.policy(policy).policy().limit()).isEqualTo(limit);
	}

	@Test
	void headersThatDoNotParseSayNothingAndFailNoCall() {
		RestClient client = restClient("paced");
		this.answer.add(new String[] { "RateLimit", "\"x\";r=zero;t=;;==,,\"" });
		this.answer.add(new String[] { "RateLimit-Policy", "\"x\";q=-5;w=0, \"y\";q=1" });
		this.answer.add(new String[] { "RateLimit-Remaining", "0" });
		this.answer.add(new String[] { "RateLimit-Reset", "99999999999999999999" });
		for (int i = 0; i < 3; i++) {
			assertThat(client.get().uri("/orders").retrieve().body(String.class)).isEqualTo("ok");
		}
		assertThat(this.catalog.policy("paced").policy().limit()).isEqualTo(10);
	}

	@Test
	void aPolicyNotConfiguredOrAConcurrencyLimitFailsNamingIt() {
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> this.limits.interceptor("nowhere"))
			.withMessageContaining("ratelimit.policies.nowhere.limit");
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> this.limits.interceptor("slots"))
			.withMessageContaining("CONCURRENCY cannot limit outbound calls");
	}

	@Test
	void aServiceAnswering503WithoutRetryAfterHoldsNothingOff() {
		RestClient client = restClient("partner");
		this.status = 503;
		assertThatExceptionOfType(org.springframework.web.client.HttpServerErrorException.class)
			.isThrownBy(() -> client.get().uri("/orders").retrieve().body(String.class));
		this.status = 200;
		assertThat(client.get().uri("/orders").retrieve().body(String.class)).isEqualTo("ok");
		assertThat(this.received).hasValue(2);
	}

	private RestClient restClient(String policy) {
		return RestClient.builder()
			.requestFactory(new JdkClientHttpRequestFactory())
			.baseUrl("http://127.0.0.1:" + this.server.getAddress().getPort())
			.requestInterceptor(this.limits.interceptor(policy))
			.build();
	}

	private static PolicyValues values(String policy, Object... values) {
		Map<String, Object> map = new LinkedHashMap<>();
		for (int i = 0; i < values.length; i += 2) {
			map.put((String) values[i], values[i + 1]);
		}
		return new PolicyValues("ratelimit.policies." + policy, map);
	}

}
