package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.client.RetryAfterInterceptor;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.imperative.ImperativeHttpClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hostile server that answers every request {@code 429} with a {@code Retry-After} of hours or centuries, against
 * each request factory Boot can choose: the interceptor's bound on the total wait holds with every one, Apache
 * HttpClient 5 included (which retries by itself, sleeping what the server says, unless told not to).
 */
class RetryAfterInterceptorFactoriesTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(RetryAfterHttpClientAutoConfiguration.class, HttpClientAutoConfiguration.class,
					ImperativeHttpClientAutoConfiguration.class));

	private final AtomicInteger requests = new AtomicInteger();

	private HttpServer server;

	@BeforeEach
	void startHostileServer() throws Exception {
		this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		this.server.createContext("/", (exchange) -> {
			this.requests.incrementAndGet();
			String retryAfter = exchange.getRequestURI().getPath().endsWith("/centuries") ? "99999999999" : "20";
			exchange.getResponseHeaders().add("Retry-After", retryAfter);
			byte[] body = "slow down".getBytes(StandardCharsets.UTF_8);
			exchange.sendResponseHeaders(429, body.length);
			exchange.getResponseBody().write(body);
			exchange.close();
		});
		this.server.start();
	}

	@AfterEach
	void stopHostileServer() {
		this.server.stop(0);
	}

	@ParameterizedTest
	@ValueSource(strings = { "http-components", "jetty", "reactor", "jdk", "simple" })
	void aHostileRetryAfterIsNeverWaitedBeyondTheInterceptorsBound(String factory) {
		this.runner.withPropertyValues("spring.http.clients.imperative.factory=" + factory).run((context) -> {
			ClientHttpRequestFactory requestFactory = context.getBean(ClientHttpRequestFactoryBuilder.class).build();
			RestClient client = RestClient.builder()
				.requestFactory(requestFactory)
				.baseUrl("http://127.0.0.1:" + this.server.getAddress().getPort())
				.requestInterceptor(RetryAfterInterceptor.builder().maxAttempts(3).maxTotalWait(Duration.ofSeconds(2))
					.build())
				.build();
			for (String path : new String[] { "/seconds", "/centuries" }) {
				this.requests.set(0);
				long start = System.nanoTime();
				int status = client.get().uri(path).exchange((request, response) -> response.getStatusCode().value());
				Duration took = Duration.ofNanos(System.nanoTime() - start);
				assertThat(status).isEqualTo(429);
				assertThat(this.requests).as("%s %s: asked once, since the wait is over the bound", factory, path)
					.hasValue(1);
				assertThat(took).as("%s %s", factory, path).isLessThan(Duration.ofSeconds(5));
			}
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "keep" })
	void httpComponentsKeepsItsOwnStatusRetriesWhenAskedTo(String setting) {
		this.runner
			.withPropertyValues("spring.http.clients.imperative.factory=http-components",
					"ratelimit.client.http-components-status-retries=" + setting)
			.run((context) -> assertThat(context).doesNotHaveBean("rateLimitHttpComponentsRetries"));
	}

}
