package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.client.HttpComponentsRetries;
import io.github.ratelimit.client.RetryAfterInterceptor;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;

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
 * responses ({@link HttpComponentsRetries#connectionFailuresOnly()}). Switch it off with {@code ratelimit.client.http-components-status-retries=keep}.
 *
 * @since 0.2.0
 */
@AutoConfiguration(before = HttpClientAutoConfiguration.class)
@ConditionalOnClass({ RetryAfterInterceptor.class, HttpClientBuilder.class,
		HttpComponentsClientHttpRequestFactoryBuilder.class, ClientHttpRequestFactoryBuilderCustomizer.class })
@ConditionalOnProperty(name = "ratelimit.client.http-components-status-retries", havingValue = "off",
		matchIfMissing = true)
public final class RetryAfterHttpClientAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "rateLimitHttpComponentsRetries")
	ClientHttpRequestFactoryBuilderCustomizer<HttpComponentsClientHttpRequestFactoryBuilder> rateLimitHttpComponentsRetries() {
		return (builder) -> builder.withHttpClientCustomizer(
				(client) -> client.setRetryStrategy(HttpComponentsRetries.connectionFailuresOnly()));
	}

}
