package io.github.ratelimit.autoconfigure;

import java.util.List;

import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.reactive.result.method.annotation.ArgumentResolverConfigurer;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The {@code RateLimitStatus} handler-method argument on each web stack, imported whether limits are on
 * ({@link RateLimitAutoConfiguration}) or off ({@link RateLimitDisabledAutoConfiguration}, where nothing sets the
 * limits it reads, so that it has none): a controller that declares it runs either way.
 */
final class RateLimitStatusConfigurations {

	private RateLimitStatusConfigurations() {
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	@ConditionalOnClass({ DispatcherServlet.class, io.github.ratelimit.webmvc.RateLimitStatusArgumentResolver.class })
	static class WebMvc {

		@Bean
		@ConditionalOnMissingBean(name = "rateLimitStatusWebMvcConfigurer")
		WebMvcConfigurer rateLimitStatusWebMvcConfigurer() {
			return new WebMvcConfigurer() {

				@Override
				public void addArgumentResolvers(List<HandlerMethodArgumentResolver> resolvers) {
					resolvers.add(new io.github.ratelimit.webmvc.RateLimitStatusArgumentResolver());
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	@ConditionalOnClass({ DispatcherHandler.class, io.github.ratelimit.webflux.RateLimitStatusArgumentResolver.class })
	static class WebFlux {

		@Bean
		@ConditionalOnMissingBean(name = "rateLimitStatusWebFluxConfigurer")
		WebFluxConfigurer rateLimitStatusWebFluxConfigurer() {
			return new WebFluxConfigurer() {

				@Override
				public void configureArgumentResolvers(ArgumentResolverConfigurer configurer) {
					configurer.addCustomResolver(new io.github.ratelimit.webflux.RateLimitStatusArgumentResolver());
				}

			};
		}

	}

}
