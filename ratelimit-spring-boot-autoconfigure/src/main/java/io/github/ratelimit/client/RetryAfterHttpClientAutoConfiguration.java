package io.github.ratelimit.client;

import org.apache.hc.client5.http.impl.DefaultHttpRequestRetryStrategy;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.util.TimeValue;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.http.client.HttpComponentsClientHttpRequestFactoryBuilder;
import org.springframework.boot.http.client.autoconfigure.ClientHttpRequestFactoryBuilderCustomizer;
import org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * Leaves {@code Retry-After} to {@link RetryAfterInterceptor} when Boot's HTTP clients use Apache HttpClient 5: by
 * default that client retries a {@code 429} or {@code 503} by itself, inside the request the interceptor sees,
 * sleeping whatever {@code Retry-After} says (a hostile server's 99999999999 seconds included), so that none of the
 * interceptor's bounds applies. The customizer keeps HttpClient's retries of connection failures and stops those of
 * responses. Switch it off with {@code ratelimit.client.http-components-status-retries=keep}.
 *
 * @since 0.2.0
 */
@AutoConfiguration(before = HttpClientAutoConfiguration.class)
@ConditionalOnClass({ HttpClientBuilder.class, HttpComponentsClientHttpRequestFactoryBuilder.class,
		ClientHttpRequestFactoryBuilderCustomizer.class })
@ConditionalOnProperty(name = "ratelimit.client.http-components-status-retries", havingValue = "off",
		matchIfMissing = true)
public final class RetryAfterHttpClientAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "rateLimitHttpComponentsRetries")
	ClientHttpRequestFactoryBuilderCustomizer<HttpComponentsClientHttpRequestFactoryBuilder> rateLimitHttpComponentsRetries() {
		return (builder) -> builder.withHttpClientCustomizer(
				(client) -> client.setRetryStrategy(new ConnectionFailuresOnly()));
	}

	/** HttpClient's default strategy for failed connections, and no retry of a response. */
	static final class ConnectionFailuresOnly extends DefaultHttpRequestRetryStrategy {

		ConnectionFailuresOnly() {
			super(1, TimeValue.ofSeconds(1));
		}

		@Override
		public boolean retryRequest(HttpResponse response, int execCount, HttpContext context) {
			return false;
		}

	}

}
