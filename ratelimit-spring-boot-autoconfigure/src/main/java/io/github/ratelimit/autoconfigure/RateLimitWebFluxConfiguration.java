package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.aop.RateLimitedAnnotationBeanPostProcessor;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.web.HandlerMethods;
import io.github.ratelimit.webflux.RateLimitExceptionHandler;
import io.github.ratelimit.webflux.RateLimitWebFilter;
import io.github.ratelimit.webflux.ReactiveRateLimitInterceptor;
import io.github.ratelimit.webflux.WebFluxHandlerMethods;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

/**
 * The engine on Spring WebFlux: the proxies of {@code @RateLimited} beans with their reactive interceptor, the filter
 * layer as a {@code WebFilter} and the 429 advice ({@link RateLimitStatusConfigurations} has the
 * {@code RateLimitStatus} argument). Every decision is the engine's non-blocking one.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({ DispatcherHandler.class, RateLimitWebFilter.class })
class RateLimitWebFluxConfiguration {

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitedAnnotationBeanPostProcessor rateLimitedAnnotationBeanPostProcessor(
			ObjectProvider<ReactiveRateLimitInterceptor> reactiveRateLimitInterceptor, Environment environment) {
		return RateLimitEngineConfiguration.proxies(reactiveRateLimitInterceptor,
				ReactiveRateLimitInterceptor::checkReturnTypes, environment);
	}

	@Bean
	@ConditionalOnMissingBean
	ReactiveRateLimitInterceptor reactiveRateLimitInterceptor(RateLimitEngine engine) {
		return new ReactiveRateLimitInterceptor(engine);
	}

	/**
	 * The filter layer, ordered just before Spring Security's web filter chain unless {@code ratelimit.filter-order}
	 * says otherwise. Registered even when no filter is configured: it hands the request to the method layer and
	 * settles the policies that count by outcome from the status the client gets.
	 */
	@Bean
	@ConditionalOnMissingBean
	RateLimitWebFilter rateLimitWebFilter(RateLimitEngine engine, RateLimitProperties properties) {
		return new RateLimitWebFilter(engine, properties.getFilterOrder());
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitExceptionHandler rateLimitWebFluxExceptionHandler() {
		return new RateLimitExceptionHandler();
	}

	@Bean
	@ConditionalOnMissingBean
	HandlerMethods rateLimitHandlerMethods(ObjectProvider<RequestMappingHandlerMapping> handlerMappings) {
		return new WebFluxHandlerMethods(handlerMappings);
	}

}
