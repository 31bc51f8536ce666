package io.github.ratelimit.sample.gateway;

import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.context.annotation.Bean;

/**
 * A Spring Cloud Gateway in front of the API at {@code upstream.uri}, as the edge layer: its routes' limits are the
 * gateway's {@code RequestRateLimiter} filter, decided by this library (see {@code application.yml}).
 */
@SpringBootApplication
public class SampleGatewayApplication {

	/**
	 * Keys the orders route by the user id of its path ({@code /api/v1/users/{userId}/orders}).
	 * @return the key resolver
	 */
	@Bean
	KeyResolver userIdKeyResolver() {
		return (exchange) -> Mono
			.justOrEmpty(ServerWebExchangeUtils.getUriTemplateVariables(exchange).get("userId"));
	}

	public static void main(String[] args) {
		SpringApplication.run(SampleGatewayApplication.class, args);
	}

}
